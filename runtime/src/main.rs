fn main() {
    std::process::exit(srt_runtime::cli::main());
}
