//! Arbitrary bytes as a request body (JSON with duplicate detection, and protobuf): decoding
//! must never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = kubefake::endpoints::json_dups::parse(data);
    let _ = kubefake::endpoints::protobuf::decode(data);
});
