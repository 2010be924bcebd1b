use kube::CustomResourceExt;
fn main() {
    print!("{}", serde_yaml::to_string(&controller::crd::SandboxAgent::crd()).unwrap_or_default());
}
