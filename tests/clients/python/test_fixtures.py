"""The pytest plugin's fixtures, marker and ini options, through the official Python client."""

import os
import stat
import subprocess
import sys
import urllib.request

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from kubefake import Kubefake, KubefakeError

GROUP, VERSION, PLURAL = "example.kubefake.io", "v1", "widgets"


def widgets(server):
    api = client.CustomObjectsApi(server.api_client())
    return api.list_namespaced_custom_object(GROUP, VERSION, "default", PLURAL)["items"]


def test_url_kubeconfig_and_client(kubefake):
    assert kubefake.url.startswith("https://127.0.0.1:")
    assert os.path.isfile(kubefake.kubeconfig)
    assert stat.S_IMODE(os.stat(kubefake.kubeconfig).st_mode) == 0o600
    version = client.VersionApi(kubefake.api_client()).get_code()
    assert version.major == "1"
    names = [ns.metadata.name for ns in client.CoreV1Api(kubefake.api_client()).list_namespace().items]
    assert names == ["default", "kube-node-lease", "kube-public", "kube-system"]


def test_serves_https_with_rbac(kubefake):
    # No credentials: the generated CA is not trusted by urllib, and an anonymous user is denied.
    with pytest.raises(OSError):
        urllib.request.urlopen(kubefake.url + "/api/v1/namespaces", timeout=5)


def test_crds_from_the_ini_option(kubefake):
    crd = client.ApiextensionsV1Api(kubefake.api_client()).read_custom_resource_definition(
        "widgets.example.kubefake.io"
    )
    assert {c.type: c.status for c in crd.status.conditions}["Established"] == "True"
    assert widgets(kubefake) == []


@pytest.mark.kubefake(objects=["objects/widgets.yaml"])
def test_objects_from_the_marker(kubefake):
    assert [w["metadata"]["name"] for w in widgets(kubefake)] == ["preloaded"]
    cm = client.CoreV1Api(kubefake.api_client()).read_namespaced_config_map("preloaded", "default")
    assert cm.data == {"colour": "blue"}


@pytest.mark.kubefake(args=["--simulate", "--nodes", "2"])
def test_serve_flags_from_the_marker(kubefake):
    nodes = client.CoreV1Api(kubefake.api_client()).list_node().items
    assert len(nodes) == 2


def test_schema_validation_is_the_apiservers(kubefake):
    api = client.CustomObjectsApi(kubefake.api_client())
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget",
            "metadata": {"name": "tiny"}, "spec": {"size": 0}}
    with pytest.raises(ApiException) as refused:
        api.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
    assert refused.value.status == 422
    assert "should be greater than or equal to 1" in refused.value.body


def test_each_test_gets_a_fresh_server(kubefake):
    api = client.CoreV1Api(kubefake.api_client())
    assert api.list_namespaced_config_map("default", field_selector="metadata.name=settings").items == []


def test_module_and_session_servers_are_shared(kubefake_module, kubefake_session):
    assert kubefake_module.url != kubefake_session.url
    client.CoreV1Api(kubefake_module.api_client()).create_namespace({"metadata": {"name": "shared"}})


def test_module_server_keeps_state_between_tests(kubefake_module):
    ns = client.CoreV1Api(kubefake_module.api_client()).read_namespace("shared")
    assert ns.status.phase == "Active"


def test_start_to_ready(kubefake):
    # The time from spawning `kubefake serve` to its ready line, the Widget CRD established.
    print(f"\nkubefake start-to-ready: {kubefake.ready_seconds * 1000:.0f} ms")
    assert kubefake.ready_seconds > 0


def test_bad_manifest_is_reported(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n")
    with pytest.raises(KubefakeError, match="Bad_Name"):
        Kubefake.start(objects=[bad])


def test_stop_ends_the_process():
    server = Kubefake.start()
    kubeconfig = server.kubeconfig
    server.stop()
    assert not os.path.exists(kubeconfig)
    with pytest.raises(OSError):
        urllib.request.urlopen(server.url.replace("https", "http") + "/healthz", timeout=2)


def test_python_m_kubefake_runs_the_bundled_binary():
    run = subprocess.run([sys.executable, "-m", "kubefake", "serve", "--help"],
                         capture_output=True, text=True, timeout=30, check=True)
    assert "Usage: kubefake serve" in run.stdout
