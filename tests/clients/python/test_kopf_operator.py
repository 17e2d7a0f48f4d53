"""A kopf operator tested with kopf.testing.KopfRunner against the kubefake fixture."""

import time
from pathlib import Path

from kopf.testing import KopfRunner
from kubernetes import client

OPERATOR = str(Path(__file__).with_name("widget_operator.py"))
GROUP, VERSION, PLURAL = "example.kubefake.io", "v1", "widgets"


def eventually(probe, timeout=20.0):
    """Polls probe() until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


def test_operator_reconciles_and_posts_events(kubefake, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", kubefake.kubeconfig)
    api_client = kubefake.api_client()
    widgets = client.CustomObjectsApi(api_client)
    core = client.CoreV1Api(api_client)
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget",
            "metadata": {"name": "gear"}, "spec": {"size": 2}}

    def status():
        return widgets.get_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "gear").get("status", {})

    def reasons():
        events = core.list_namespaced_event("default", field_selector="involvedObject.name=gear").items
        return {event.reason for event in events if event.involved_object.kind == "Widget"}

    with KopfRunner(["run", "--standalone", "--namespace", "default", "--verbose", OPERATOR]) as runner:
        widgets.create_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, body)
        assert eventually(lambda: status().get("parts")) == 4
        assert eventually(lambda: "Sized" in reasons()), reasons()
        widgets.patch_namespaced_custom_object(GROUP, VERSION, "default", PLURAL, "gear", {"spec": {"size": 5}})
        assert eventually(lambda: status().get("parts") == 10), status()
        assert eventually(lambda: "Resized" in reasons()), reasons()

    assert runner.exit_code == 0, runner.output
    assert runner.exception is None
    assert "Handler 'created' succeeded." in runner.output
    sized = [e for e in core.list_namespaced_event("default").items if e.reason == "Sized"]
    assert sized[0].message == "widget gear has size 2"
    assert sized[0].type == "Normal"
    assert sized[0].source.component == "kopf"
