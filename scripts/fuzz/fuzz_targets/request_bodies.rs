//! Arbitrary bytes as a request body, through every body decoder: JSON with duplicate
//! detection, YAML, protobuf (and encoding again what protobuf decoding accepted), and the
//! patch formats. Decoding must never panic, and must stay linear in the body (libFuzzer's
//! `-timeout` catches a slow input): the corpus (`scripts/fuzz/gen-corpus.py`) holds the
//! pathological shapes of issue 12 (deep long keys above a huge array, many duplicated keys,
//! YAML alias bombs, deep nesting).
#![no_main]

use kubefake::endpoints::negotiation::decode_bytes;
use kubefake::endpoints::patch::{Patch, PatchType};
use libfuzzer_sys::fuzz_target;

const MEDIA: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

fuzz_target!(|data: &[u8]| {
    for media in MEDIA {
        let _ = decode_bytes(media, data, "ConfigMap", true);
    }
    if let Ok(obj) = kubefake::endpoints::protobuf::decode(data) {
        let _ = kubefake::endpoints::protobuf::encode(&obj);
    }
    for kind in [PatchType::Merge, PatchType::Json, PatchType::StrategicMerge] {
        let _ = Patch::parse(kind, data, "io.k8s.api.core.v1.ConfigMap");
    }
});
