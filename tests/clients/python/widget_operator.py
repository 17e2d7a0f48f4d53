"""A small kopf operator for Widgets, run by test_kopf_operator.py with kopf.testing.KopfRunner."""

import kopf


@kopf.on.login()
def login(**kwargs):
    # $KUBECONFIG as it is now (the kubernetes client reads it once, when first imported).
    return kopf.login_with_kubeconfig(**kwargs)


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.watching.server_timeout = 10
    settings.posting.level = 20  # logging.INFO: handler outcomes become Events too


@kopf.on.create("example.kubefake.io", "v1", "widgets")
def created(spec, name, body, patch, **_):
    kopf.info(body, reason="Sized", message=f"widget {name} has size {spec['size']}")
    patch.status["parts"] = spec["size"] * 2


@kopf.on.update("example.kubefake.io", "v1", "widgets", field="spec.size")
def resized(new, body, patch, **_):
    kopf.event(body, type="Normal", reason="Resized", message=f"now size {new}")
    patch.status["parts"] = new * 2
