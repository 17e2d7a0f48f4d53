//! Arbitrary bytes as a request body (JSON with duplicate detection, and protobuf): decoding
//! must never panic, nor encoding again what protobuf decoding accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kubefake::endpoints::json_dups::parse(data);
    if let Ok(obj) = kubefake::endpoints::protobuf::decode(data) {
        let _ = kubefake::endpoints::protobuf::encode(&obj);
    }
});
