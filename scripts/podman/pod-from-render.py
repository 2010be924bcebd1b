#!/usr/bin/env python3
"""Turn `srt-controller render` output into what `podman kube play` takes: the ConfigMap
as its own file (for --configmap) and the Sandbox's podTemplate as a Pod.
Usage: pod-from-render.py [--token-secret NAME] RENDERED POD_NAME OUT_POD OUT_CONFIGMAP [SECCOMP_LOCALHOST_PROFILE]
With SECRETS=FILE in the environment, env vars taken from a Secret key (secretKeyRef) get
that key's value from the Secret manifests in FILE: podman 4.3 has no Kubernetes Secrets
(without it, podman resolves a secretKeyRef from a podman secret of that name).
With SECCOMP_LOCALHOST_PROFILE the pod carries the annotation podman 4.x reads for a
custom profile (seccomp.security.alpha.kubernetes.io/pod: localhost/<file>, resolved
under --seccomp-profile-root); podman ignores securityContext.seccompProfile, and
without the annotation uses its own default profile, which is what RuntimeDefault means.
With --token-secret the projected kagent-token volume (podman cannot mint ServiceAccount
tokens) becomes that podman secret, mounted where the token would be; without it, it goes.
Everything else is the rendered pod as it is, except what podman 4.3 refuses (below).
"""
import os
import sys

import yaml

args = sys.argv[1:]
token_secret = None
if args[:1] == ["--token-secret"]:
    token_secret, args = args[1], args[2:]
rendered, pod_name, out_pod, out_cm = args[0:4]
profile = args[4] if len(args) > 4 else None
with open(rendered) as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
configmap = next(d for d in docs if d["kind"] == "ConfigMap")
# a Declarative agent's config Secret (config.json, agent card, spec), projected with the
# settings ConfigMap into /config: podman 4.3 takes ConfigMaps (--configmap) but neither
# Kubernetes Secrets nor projected ConfigMap/Secret sources, so its keys join the ConfigMap and
# the projected volume becomes that ConfigMap's
config_secret = next((d for d in docs if d["kind"] == "Secret"), None)
if config_secret:
    configmap["data"].update(config_secret.get("stringData", {}))
sandbox = next(d for d in docs if d["kind"] == "Sandbox")
template = sandbox["spec"]["podTemplate"]
metadata = {"name": pod_name, "labels": template.get("metadata", {}).get("labels", {})}
annotations = dict(template.get("metadata", {}).get("annotations", {}))
if profile:
    annotations["seccomp.security.alpha.kubernetes.io/pod"] = "localhost/" + profile
if annotations:
    metadata["annotations"] = annotations
# podman kube play publishes containerPorts on the host, which --network none refuses
# ("PortMappings can only be used with Bridge or slirp4netns networking"); the test
# reaches the pod with podman exec, so the ports go. podman 4.3 has no namespaces or service
# accounts and refuses fieldRef metadata.namespace and spec.serviceAccountName: such
# variables get the Sandbox's namespace and the pod's serviceAccountName as values. It
# cannot mint ServiceAccount tokens either: the projected kagent-token volume and its mount go,
# or with --token-secret become a Secret volume holding a stand-in token at the same path.
# podman 4.3.1 dereferences a Secret volume's `optional` without checking it is set.
namespace = sandbox["metadata"].get("namespace", "default")
account = template["spec"].get("serviceAccountName", "default")
values = {"metadata.namespace": namespace, "spec.serviceAccountName": account}
tokens = [v["name"] for v in template["spec"].get("volumes", [])
          if any("serviceAccountToken" in s for s in v.get("projected", {}).get("sources", []))]
volumes = []
for v in template["spec"].get("volumes", []):
    if v["name"] in tokens:
        if not token_secret:
            continue
        v = {"name": v["name"], "secret": {"secretName": token_secret}}
    sources = v.get("projected", {}).get("sources", [])
    if config_secret and sources and all(
            s.get("configMap", {}).get("name") == configmap["metadata"]["name"]
            or s.get("secret", {}).get("name") == config_secret["metadata"]["name"] for s in sources):
        v = {"name": v["name"], "configMap": {"name": configmap["metadata"]["name"]}}
    if "secret" in v:
        v["secret"].setdefault("optional", False)
    volumes.append(v)
template["spec"]["volumes"] = volumes
if token_secret:
    tokens = []
secrets = {}
if os.environ.get("SECRETS"):
    with open(os.environ["SECRETS"]) as f:
        for d in yaml.safe_load_all(f):
            if d and d.get("kind") == "Secret":
                secrets[d["metadata"]["name"]] = d.get("stringData", {})
for container in template["spec"].get("containers", []) + template["spec"].get("initContainers", []):
    for env in container.get("env", []):
        ref = env.get("valueFrom", {}).get("secretKeyRef")
        if ref and ref["name"] in secrets and ref["key"] in secrets[ref["name"]]:
            env.pop("valueFrom")
            env["value"] = secrets[ref["name"]][ref["key"]]
    container.pop("ports", None)
    container["volumeMounts"] = [m for m in container.get("volumeMounts", []) if m["name"] not in tokens]
    for env in container.get("env", []):
        field = env.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
        if field in values:
            env.pop("valueFrom")
            env["value"] = values[field]
# podman 4.3 mounts every key of a configMap volume and ignores `items` (Kubernetes mounts
# only the listed keys, under their paths): such a volume gets a ConfigMap of its own with
# just those keys under those names, written beside OUT_CONFIGMAP as <name>-items.yaml
items_maps = []
for v in template["spec"].get("volumes", []):
    cm = v.get("configMap")
    if cm and cm.get("items"):
        data = {i["path"]: configmap["data"][i["key"]] for i in cm["items"]}
        name = cm["name"] + "-" + v["name"]
        items_maps.append({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": name, "namespace": namespace}, "data": data})
        v["configMap"] = {"name": name}
if items_maps:
    with open(out_cm[:-len(".yaml")] + "-items.yaml", "w") as f:
        yaml.safe_dump_all(items_maps, f, sort_keys=False)
# podman 4.3 applies the pod's restart policy (Always when unset) to init containers too and
# restarts the finished cp again and again (containers/podman#16343); OnFailure starts it once
template["spec"].setdefault("restartPolicy", "OnFailure")
pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
with open(out_pod, "w") as f:
    yaml.safe_dump(pod, f, sort_keys=False)
with open(out_cm, "w") as f:
    yaml.safe_dump(configmap, f, sort_keys=False)
