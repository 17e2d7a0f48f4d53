# README's Python quickstart: `pip install kubefake`, then this file is a complete test.
from kubernetes import client


def test_configmap_round_trip(kubefake):
    api = client.CoreV1Api(kubefake.api_client())
    api.create_namespaced_config_map(
        "default", {"metadata": {"name": "settings"}, "data": {"mode": "fast"}}
    )
    assert api.read_namespaced_config_map("settings", "default").data == {"mode": "fast"}
