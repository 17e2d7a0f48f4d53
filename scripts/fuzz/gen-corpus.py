#!/usr/bin/env python3
"""Writes the seed corpus of the `request_bodies` fuzz target: the pathological body shapes of
issue 12 plus a few ordinary bodies.

    scripts/fuzz/gen-corpus.py          # small seeds (a few KB each), as committed
    scripts/fuzz/gen-corpus.py --full   # also full-size ones (about 3 MB each, not committed)
    cargo +nightly fuzz run --fuzz-dir scripts/fuzz request_bodies -- -timeout=10 -max_len=3145728

Every decoder must answer each of them in time linear in its size.
"""
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "request_bodies")


def deep_long_keys_then_array(depth, key_len, size):
    """`depth` objects nested under keys of `key_len` bytes above an array filling `size`."""
    parts = []
    for d in range(depth):
        parts.append('{"' + chr(ord("a") + d % 26) * key_len + '":')
    head = "".join(parts) + '{"l":[0'
    body = head + ",0" * max(0, (size - len(head)) // 2) + "]}" + "}" * depth
    return body.encode()


def duplicated_keys(keys, field="data"):
    """A ConfigMap whose `field` holds `keys` keys, each written twice."""
    inner = ",".join(f'"k{i}":"v","k{i}":"v"' for i in range(keys // 2))
    return ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"d"},"' + field
            + '":{' + inner + "}}").encode()


def yaml_alias_bomb(levels, fan):
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: lol",
             "a0: &a0 [" + ",".join(['"lol"'] * fan) + "]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * fan) + "]")
    return ("\n".join(lines) + "\n").encode()


def nested(open_, close, n):
    return (open_ * n + close * n).encode()


def protobuf_nested(depth):
    """The `k8s\\0` envelope around a Unknown whose raw bytes nest a length-delimited field
    (field 1) `depth` times."""
    inner = b""
    for _ in range(depth):
        inner = b"\x0a" + varint(len(inner)) + inner
    type_meta = b"\x0a\x02v1\x12\x03Pod"
    unknown = b"\x0a" + varint(len(type_meta)) + type_meta + b"\x12" + varint(len(inner)) + inner
    return b"k8s\x00" + unknown


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def seeds(full):
    yield "configmap.json", b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}'
    yield "configmap.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"
    yield "json-patch.json", b'[{"op":"add","path":"/data/k","value":"v"}]'
    yield "deep-long-keys-small.json", deep_long_keys_then_array(6, 256, 4096)
    yield "duplicated-keys-small.json", duplicated_keys(200)
    yield "yaml-alias-bomb.yaml", yaml_alias_bomb(12, 9)
    yield "deep-arrays.json", nested("[", "]", 2000)
    yield "deep-flow.yaml", nested("[", "]", 2000)
    yield "deep-objects.json", nested('{"a":', "}", 1000)
    yield "protobuf-nested.pb", protobuf_nested(300)
    if full:
        yield "full-deep-long-keys.json", deep_long_keys_then_array(60, 24 * 1024, 3_000_000)
        yield "full-duplicated-keys.json", duplicated_keys(180_000)
        yield "full-yaml-alias-bomb.yaml", yaml_alias_bomb(30, 9)


def main():
    full = "--full" in sys.argv[1:]
    os.makedirs(OUT, exist_ok=True)
    for name, data in seeds(full):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
        print(f"{name}: {len(data)} bytes")


if __name__ == "__main__":
    main()
