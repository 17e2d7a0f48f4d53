"""The official Python client against kubefake: namespaces, a CRD, custom objects (create, get,
list, patch, delete), a watch, an error Status, and an APIService created from a manifest twice
(the client's own e2e conflict test), and kubefake's own API through the client's ApiClient: a
snapshot restored under a watch, a reset, a dump; a fault rule the next read meets, then the
request log showing it. Run by scripts/python-client.sh."""

import sys
import threading
import time

from kubernetes import client, config, utils, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
core = client.CoreV1Api()
ext = client.ApiextensionsV1Api()
custom = client.CustomObjectsApi()

failures = []


def check(name, ok):
    print(("ok   " if ok else "FAIL ") + name)
    if not ok:
        failures.append(name)


names = [ns.metadata.name for ns in core.list_namespace().items]
check("initial namespaces", names == ["default", "kube-node-lease", "kube-public", "kube-system"])

core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))
check("create a namespace", core.read_namespace("py").status.phase == "Active")

crd = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "shortNames": ["ct"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                "type": "object", "properties": {
                    "cronSpec": {"type": "string"}, "image": {"type": "string"},
                    "replicas": {"type": "integer", "maximum": 10}}}}}},
        }],
    },
}
created = ext.create_custom_resource_definition(crd)
conditions = {c.type: c.status for c in created.status.conditions}
check("CRD established", conditions.get("Established") == "True")

args = ("stable.example.com", "v1", "py", "crontabs")
seen = []


def watcher():
    w = watch.Watch()
    for event in w.stream(custom.list_namespaced_custom_object, *args, timeout_seconds=5):
        seen.append((event["type"], event["object"]["metadata"]["name"]))
        if event["type"] == "DELETED":
            w.stop()


thread = threading.Thread(target=watcher)
thread.start()

body = {"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "py-cron"}, "spec": {"cronSpec": "* * * * */5", "image": "img", "replicas": 1}}
custom.create_namespaced_custom_object(*args, body)
got = custom.get_namespaced_custom_object(*args, "py-cron")
check("create and get a custom object", got["spec"]["image"] == "img" and got["metadata"]["generation"] == 1)
items = custom.list_namespaced_custom_object(*args)["items"]
check("list", [i["metadata"]["name"] for i in items] == ["py-cron"])
patched = custom.patch_namespaced_custom_object(*args, "py-cron", {"spec": {"replicas": 3}})
check("merge patch", patched["spec"]["replicas"] == 3 and patched["metadata"]["generation"] == 2)

try:
    custom.patch_namespaced_custom_object(*args, "py-cron", {"spec": {"replicas": 30}})
    check("invalid patch refused", False)
except ApiException as e:
    check("invalid patch refused with 422", e.status == 422 and "should be less than or equal to 10" in e.body)

custom.delete_namespaced_custom_object(*args, "py-cron")
thread.join(timeout=10)
check("watch saw every change", seen == [("ADDED", "py-cron"), ("MODIFIED", "py-cron"), ("DELETED", "py-cron")])

try:
    custom.get_namespaced_custom_object(*args, "py-cron")
    check("deleted object is gone", False)
except ApiException as e:
    check("deleted object is 404", e.status == 404)

core.delete_namespace("py")
try:
    core.read_namespace("py")
    check("namespace deleted", False)
except ApiException as e:
    check("namespace deleted", e.status == 404)

api_service = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
               "metadata": {"name": "v1alpha1.wardle.k8s.io"},
               "spec": {"group": "wardle.k8s.io", "version": "v1alpha1", "insecureSkipTLSVerify": True,
                        "groupPriorityMinimum": 1000, "versionPriority": 15,
                        "service": {"namespace": "wardle", "name": "api"}}}
api_client = client.ApiClient()
utils.create_from_dict(api_client, api_service)
registration = client.ApiregistrationV1Api().read_api_service("v1alpha1.wardle.k8s.io")
check("create an APIService from a manifest", registration.spec.service.port == 443)
try:
    utils.create_from_dict(api_client, api_service)
    check("a second create conflicts", False)
except utils.FailToCreateError as e:
    check("a second create conflicts", '"reason":"AlreadyExists"' in str(e) and '"code":409' in str(e))



def kubefake(method, path, **kwargs):
    """kubefake's own API (/kubefake/v1/), with the kubeconfig's credentials."""
    return api_client.call_api("/kubefake/v1/" + path, method, auth_settings=["BearerToken"],
                               response_type="object", _return_http_data_only=True, **kwargs)


def configmap(name, value):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"v": value})


core.create_namespaced_config_map("default", configmap("py-kept", "1"))
snapshot = kubefake("POST", "snapshots")["id"]
core.create_namespaced_config_map("default", configmap("py-added", "1"))
core.patch_namespaced_config_map("py-kept", "default", {"data": {"v": "2"}})
rv = core.list_namespaced_config_map("default").metadata.resource_version
restored_events = []


def restore_watcher():
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_config_map, "default", resource_version=rv,
                          timeout_seconds=5):
        restored_events.append((event["type"], event["object"].metadata.name,
                                event["object"].data["v"]))
        if len(restored_events) == 2:
            w.stop()


thread = threading.Thread(target=restore_watcher)
thread.start()
time.sleep(0.5)
restored = kubefake("POST", f"snapshots/{snapshot}/restore")
thread.join(timeout=10)
check("restore answers the new resourceVersion", int(restored["resourceVersion"]) > int(rv))
check("a watch sees the restore's difference",
      restored_events == [("DELETED", "py-added", "1"), ("MODIFIED", "py-kept", "1")])
dump = kubefake("GET", "dump", query_params=[("namespace", "default"), ("resource", "configmaps")],
                _preload_content=False).data.decode()
check("the dump lists the restored objects",
      "name: py-kept" in dump and "py-added" not in dump and dump.startswith("---"))
kubefake("POST", "reset")
names = [cm.metadata.name for cm in core.list_namespaced_config_map("default").items]
check("a reset returns to the start state", names == ["kube-root-ca.crt"])
try:
    kubefake("POST", "snapshots/none/restore")
    check("an unknown snapshot is 404", False)
except ApiException as e:
    check("an unknown snapshot is 404", e.status == 404 and '"reason":"NotFound"' in e.body)
def kubefake_api(method, path, body=None):
    """kubefake's own API (/kubefake/v1/...) through the client's ApiClient: its
    authentication and TLS settings come from the kubeconfig, as for every other call."""
    return api_client.call_api(path, method, body=body, response_type="object",
                               auth_settings=["BearerToken"], _return_http_data_only=True)


rule = {"match": {"verb": "get", "resource": "namespaces", "name": "default"},
        "action": {"code": 503, "message": "injected by the Python test"}, "times": 1}
fault_id = kubefake_api("POST", "/kubefake/v1/faults", rule)["id"]
try:
    core.read_namespace("default")
    check("a fault answers the next read", False)
except ApiException as e:
    check("a fault answers the next read with its 503",
          e.status == 503 and "injected by the Python test" in e.body)
check("the read after it is served", core.read_namespace("default").metadata.name == "default")
faults = kubefake_api("GET", "/kubefake/v1/faults")["items"]
check("the fault fired once", [(f["id"], f["fired"]) for f in faults] == [(fault_id, 1)])
log = kubefake_api("GET", "/kubefake/v1/requests?resource=namespaces&name=default")["items"]
check("the request log shows the faulted read, then the served one",
      [(r["verb"], r["code"], r.get("fault")) for r in log][-2:] == [("get", 503, fault_id), ("get", 200, None)]
      and log[-1]["userAgent"].startswith("OpenAPI-Generator/"))
kubefake_api("DELETE", f"/kubefake/v1/faults/{fault_id}")
check("the fault is removed", kubefake_api("GET", "/kubefake/v1/faults")["items"] == [])

print(f"python client: {len(failures)} failed" if failures else "python client: all checks passed")
sys.exit(1 if failures else 0)
