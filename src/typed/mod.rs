//! The Go types of the built-in kinds, as data, and what they make of JSON.
//!
//! [`model`] is the table `scripts/gen-k8s-data` generates by reflection over client-go's
//! scheme (per struct field: JSON name, Go kind and type, pointer / omitempty / omitzero /
//! inline, protobuf number and wire type), embedded and parsed once per process. The protobuf
//! transcoder ([`crate::endpoints::protobuf`]) and [`normalize()`] are built on it.
//!
//! [`normalize()`] is the apiserver's JSON round trip for a built-in kind: it decodes a body
//! into the kind's Go struct and encodes it again, and kubefake, which keeps objects as JSON
//! trees, needs the same result without the structs: unknown fields dropped (and reported as
//! the strict decoder reports them), Go's omission rules per field, canonical quantities and
//! times, and Go's error texts for values of the wrong type. [`quantity`] and [`gotime`] are
//! the hand-written JSON forms of `resource.Quantity` and the `metav1` time types.
//!
//! The decoder emulated is the apiserver's: sigs.k8s.io/json (encoding/json with exact,
//! case-sensitive key matching; plain encoding/json would also accept `Replicas` for
//! `replicas`), strict, so that unknown fields come back as paths; the encoder is
//! encoding/json's (Go 1.26, with `omitzero`).
//!
//! # Verification against Go
//!
//! `src/data/k8s-1.36/testdata/typed-cases.jsonl` holds 304 inputs chosen by hand (54 kinds
//! of 20 groups, core included: the objects of `scripts/gen-k8s-data/objects.jsonl`, sparse
//! and empty versions, unknown fields at every depth, nulls and zero values, odd quantities,
//! times, IntOrStrings and base64, and values of the wrong type) with what Go made of each:
//! sigs.k8s.io/json's `UnmarshalStrict` into the scheme's typed object, then encoding/json's
//! `Marshal`, as the apiserver does. The unit tests check every one. Ignored tests compare
//! files of further Go answers (see `tests.rs`): on 15,200 generated objects (apimachinery's
//! fuzzer for every kind plus mutations: sparse, nulls, unknown keys, odd and invalid values
//! per Go type), 18,623 random quantities and 10,253 random times, the only differences left
//! are the known ones below.
//!
//! # Known differences
//!
//! - serde_json keeps no number literals: a number with an exponent or beyond 64 bits is
//!   quoted in errors as serde_json writes it (`1000.0` where Go says `1e3`), `-0.0` is taken
//!   for `-0` (which Go accepts for integers), and a quantity given as such a number is read
//!   from its plain decimal digits (Go keeps `1e3` in exponent form). Likewise a quantity
//!   string written with a JSON escape of a plain character (`"1\u004b"`) is read unescaped.
//! - Go reads keys in document order, serde_json's maps are sorted: with several errors in
//!   one object the one reported may differ, unknown-field paths come in key order, and a
//!   duplicated key (which the JSON parser reports) keeps its last value where Go merges
//!   objects.
//! - Kinds outside the table: custom resources, `apiextensions.k8s.io` and `meta.k8s.io/v1
//!   Table` (no protobuf, so the generator does not record them) are `NotRegistered`.
//! - Quantities with exponents in the billions (`1e-2147483648`) are canonicalized here; Go
//!   computes 10^exponent in full and does not answer in useful time.
//!
//! # Costs
//!
//! Linear in the input; a struct's fields are flattened with their inline structs' and
//! indexed on first use. A Deployment (2.7 KB) normalizes in about 19 µs, against 16 µs for
//! `serde_json::from_slice` of the same text; a sparse one (a name, a selector, a container)
//! in about 2.5 µs (release build, `cargo bench --bench protobuf`, shared 2-core machine).

pub mod error;
pub mod gotime;
pub mod model;
pub mod normalize;
pub mod order;
pub mod syntax;

pub use error::TypedError;
pub use normalize::{normalize, Normalized};
#[cfg(test)]
mod tests;
