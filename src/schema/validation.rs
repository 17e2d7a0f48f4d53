//! Value validation, as kube-openapi's `validate.SchemaValidator` does it for custom resources,
//! with the apiextensions-apiserver's ratcheting and its translation into field errors.
//!
//! The shape of the Go validator is kept on purpose: the same validators run in the same order,
//! results merge with the same de-duplication (by message) and the same `MatchCount` bookkeeping
//! (which decides which failing `anyOf`/`oneOf` branch is reported). Paths are built lazily: on
//! the happy path nothing is allocated.

use serde_json::{Map, Value};

use super::formats;
use super::structural::{type_bits, Additional, Node};
use crate::error::StatusCause;
use crate::machinery::gofmt::{error_value, go_float_v, go_json, go_num_v, go_quote, GoNum};

/// One step of a path, kept on the stack while descending.
#[derive(Debug, Clone, Copy)]
pub enum Seg<'a> {
    /// The object itself.
    Root,
    /// A property (`a.b`).
    Prop(&'a str),
    /// An `additionalProperties` key: kube-openapi writes `a.k`, field paths write `a[k]`.
    Key(&'a str),
    /// An array index (`a[0]`).
    Index(usize),
}

/// A lazily rendered path: a linked list of [`Seg`]s on the call stack.
#[derive(Debug, Clone, Copy)]
pub struct VPath<'a> {
    parent: Option<&'a VPath<'a>>,
    seg: Seg<'a>,
}

impl<'a> VPath<'a> {
    /// The root.
    pub fn root() -> VPath<'static> {
        VPath {
            parent: None,
            seg: Seg::Root,
        }
    }

    /// A child step.
    pub fn child(&'a self, seg: Seg<'a>) -> VPath<'a> {
        VPath {
            parent: Some(self),
            seg,
        }
    }

    /// Whether this is the root.
    pub fn is_root(&self) -> bool {
        matches!(self.seg, Seg::Root)
    }

    /// kube-openapi's path string: `spec.replicas`, `spec.items[0]`, `spec.map.key`.
    pub fn openapi(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, false);
        s
    }

    /// `field.Path` rendering: `spec.template[key].items[0]` (empty at the root).
    pub fn field(&self) -> String {
        let mut s = String::new();
        self.write(&mut s, true);
        s
    }

    /// Renders the path; the two renderings differ only in how map keys are written (`.k` for
    /// kube-openapi, `[k]` for field paths).
    fn write(&self, s: &mut String, bracket_keys: bool) {
        if let Some(p) = self.parent {
            p.write(s, bracket_keys);
        }
        match self.seg {
            Seg::Root => {}
            Seg::Prop(n) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(n);
            }
            Seg::Key(k) if bracket_keys => {
                s.push('[');
                s.push_str(k);
                s.push(']');
            }
            Seg::Key(k) => {
                s.push('.');
                s.push_str(k);
            }
            Seg::Index(i) => {
                s.push('[');
                s.push_str(&i.to_string());
                s.push(']');
            }
        }
    }
}

/// kube-openapi's error codes, which decide the field error type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// `InvalidTypeCode` (type and format mismatches).
    InvalidType,
    /// `RequiredFailCode`.
    Required,
    /// `TooLongFailCode`.
    TooLong,
    /// `MaxItemsFailCode`.
    MaxItems,
    /// `TooManyPropertiesCode`.
    TooManyProperties,
    /// `EnumFailCode`.
    Enum,
    /// Every other `*errors.Validation` (min/max, pattern, minItems, ...): `field.Invalid`.
    Other,
    /// A plain error (junctor failures, range checks): reported on the parent path with value "".
    Plain,
}

/// One kube-openapi error before translation.
#[derive(Debug, Clone)]
pub struct VErr {
    /// The error code.
    pub code: Code,
    /// `Validation.Name`: the kube-openapi path of the error.
    pub name: String,
    /// `Error()`: the kube-openapi message (also the de-duplication key).
    pub message: String,
    /// `Validation.Value` (`Null` when Go has nil).
    pub value: Value,
    /// `Validation.Valid` for length/count limits.
    pub valid: i64,
    /// The allowed values of an enum failure.
    pub values: Vec<Value>,
}

impl VErr {
    fn new(code: Code, name: String, message: String, value: Value) -> VErr {
        VErr {
            code,
            name,
            message,
            value,
            valid: 0,
            values: Vec::new(),
        }
    }

    /// The limit of a length or count error, which the field error quotes.
    fn with_valid(mut self, valid: i64) -> VErr {
        self.valid = valid;
        self
    }

    fn plain(message: String) -> VErr {
        VErr::new(Code::Plain, String::new(), message, Value::Null)
    }

    /// The field error the apiserver reports (`kubeOpenAPIResultToFieldErrors`), relative to
    /// `base` (None for a whole custom resource, which the apiserver prints as `<nil>` when the
    /// error has no path).
    pub fn to_cause(&self, base: Option<&str>) -> StatusCause {
        let (reason, message) = self.reason_and_message();
        StatusCause {
            reason: reason.into(),
            message,
            field: self.field(base),
        }
    }

    /// The field path of the error: its name under `base`; a plain error, or one without a
    /// name, is reported on `base` itself.
    fn field(&self, base: Option<&str>) -> String {
        let base_field = || base.map_or_else(|| "<nil>".to_string(), str::to_string);
        if self.code == Code::Plain || self.name.is_empty() || self.name == "." {
            return base_field();
        }
        let name = self.name.strip_prefix('.').unwrap_or(&self.name);
        match base {
            Some(b) if !b.is_empty() => format!("{b}.{name}"),
            _ => name.to_string(),
        }
    }

    /// The field error type and its message, as the apiserver's `field.Error` prints them.
    fn reason_and_message(&self) -> (&'static str, String) {
        match self.code {
            Code::Plain => (
                "FieldValueInvalid",
                format!("Invalid value: \"\": {}", self.message),
            ),
            Code::Required => ("FieldValueRequired", "Required value".to_string()),
            Code::Enum => ("FieldValueNotSupported", self.not_supported_message()),
            Code::TooLong => ("FieldValueTooLong", self.too_long_message()),
            Code::MaxItems | Code::TooManyProperties => {
                let unit = if self.valid == 1 { "item" } else { "items" };
                let message = format!(
                    "Too many: {}: must have at most {} {unit}",
                    error_value(&self.value),
                    self.valid
                );
                ("FieldValueTooMany", message)
            }
            Code::InvalidType => ("FieldValueTypeInvalid", self.invalid_message()),
            Code::Other => ("FieldValueInvalid", self.invalid_message()),
        }
    }

    /// `field.NotSupported`: the value and the quoted allowed values.
    fn not_supported_message(&self) -> String {
        let quoted: Vec<String> = self
            .values
            .iter()
            .map(|v| match v {
                Value::String(s) => go_quote(s),
                other => go_quote(&go_json(other)),
            })
            .collect();
        format!(
            "Unsupported value: {}: supported values: {}",
            error_value(&self.value),
            quoted.join(", ")
        )
    }

    /// `field.TooLong`, with the limit when there is one.
    fn too_long_message(&self) -> String {
        let unit = if self.valid == 1 { "byte" } else { "bytes" };
        if self.valid >= 0 {
            format!("Too long: may not be more than {} {unit}", self.valid)
        } else {
            "Too long: value is too long".to_string()
        }
    }

    /// `field.Invalid` with kube-openapi's message (a missing value prints as `""`).
    fn invalid_message(&self) -> String {
        let value = if self.value.is_null() {
            "\"\"".to_string()
        } else {
            error_value(&self.value)
        };
        format!("Invalid value: {value}: {}", self.message)
    }
}

/// kube-openapi's `Result`: errors de-duplicated by message, plus the match count.
#[derive(Debug, Default)]
pub struct VRes {
    /// The errors, in report order.
    pub errors: Vec<VErr>,
    /// How many validators matched (used to pick the best failing junctor branch).
    pub matches: usize,
}

impl VRes {
    fn add(&mut self, e: VErr) {
        if !self.errors.iter().any(|x| x.message == e.message) {
            self.errors.push(e);
        }
    }

    fn merge(&mut self, other: VRes) {
        self.matches += other.matches;
        if other.errors.is_empty() {
            return;
        }
        for e in other.errors {
            self.add(e);
        }
    }

    fn inc(&mut self) {
        self.matches += 1;
    }

    /// No errors.
    pub fn is_valid(&self) -> bool {
        self.errors.is_empty()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    Slice,
    Map,
}

fn kind_of(v: &Value) -> Option<Kind> {
    Some(match v {
        Value::Null => return None,
        Value::Bool(_) => Kind::Bool,
        Value::Number(_) => match GoNum::of(v) {
            Some(GoNum::Int(_)) => Kind::Int,
            _ => Kind::Float,
        },
        Value::String(_) => Kind::Str,
        Value::Array(_) => Kind::Slice,
        Value::Object(_) => Kind::Map,
    })
}

impl Kind {
    /// `typeValidator.schemaInfoForType`: the JSON type (name and [`type_bits`] bit) and Go
    /// format of a value of this kind.
    fn schema_info(self) -> (&'static str, u8, &'static str) {
        match self {
            Kind::Bool => ("boolean", type_bits::BOOLEAN, ""),
            Kind::Int => ("integer", type_bits::INTEGER, "int64"),
            Kind::Float => ("number", type_bits::NUMBER, "float64"),
            Kind::Str => ("string", type_bits::STRING, ""),
            Kind::Slice => ("array", type_bits::ARRAY, ""),
            Kind::Map => ("object", type_bits::OBJECT, ""),
        }
    }
}

/// swag's `IsFloat64AJSONInteger`.
pub fn is_float_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if f.is_nan() || f.is_infinite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    let diff = (f - rounded).abs();
    diff < 1e-9 * rounded.abs()
}

fn invalid_type(path: &str, type_name: &str, value: &str) -> VErr {
    VErr::new(
        Code::InvalidType,
        path.to_string(),
        format!(
            "{path} in body must be of type {type_name}: {}",
            go_quote(value)
        ),
        Value::String(value.to_string()),
    )
}

fn type_validate(n: &Node, d: &Value, p: &VPath, r: &mut VRes) {
    let Some(kind) = kind_of(d) else {
        if n.type_mask != 0 && n.type_mask & type_bits::NULL == 0 && !n.nullable {
            return r.add(invalid_type(&p.openapi(), &n.types.join(","), "null"));
        }
        return r.inc();
    };
    let (sch_type, bit, format) = kind.schema_info();
    let contains = |bit: u8| n.type_mask & bit != 0;
    let type_ok = contains(bit)
        // A float with an integral value is an integer...
        || (kind == Kind::Float
            && contains(type_bits::INTEGER)
            && GoNum::of(d).is_some_and(|x| is_float_json_integer(x.as_f64())))
        // ...and an integer a number.
        || (kind == Kind::Int && contains(type_bits::NUMBER));
    let stringish = matches!(kind, Kind::Str | Kind::Slice);
    if !n.format.is_empty() {
        let format_ok = type_ok || format == n.format;
        if !stringish && !format_ok {
            return r.add(invalid_type(&p.openapi(), &n.format, format));
        }
        let numeric = contains(type_bits::NUMBER | type_bits::INTEGER);
        if !numeric && stringish {
            return r.inc();
        }
    }
    if !type_ok {
        return r.add(invalid_type(&p.openapi(), &n.types.join(","), sch_type));
    }
    r.inc()
}

/// kube-openapi's junctor validators, each merged in turn: `anyOf`, `oneOf`, `allOf`, `not`.
fn junctors_validate(n: &Node, d: &Value, p: &VPath, main: &mut VRes) {
    if !n.any_of.is_empty() {
        any_of_validate(&n.any_of, d, p, main);
    }
    if !n.one_of.is_empty() {
        one_of_validate(&n.one_of, d, p, main);
    }
    if !n.all_of.is_empty() {
        all_of_validate(&n.all_of, d, p, main);
    }
    if let Some(not) = &n.not {
        if schema_validate(not, d, p, None).is_valid() {
            main.add(junctor_err(p, "must not validate the schema (not)"));
        }
    }
    main.inc();
}

/// A junctor's own error: the quoted path and what it wants.
fn junctor_err(p: &VPath, what: &str) -> VErr {
    VErr::plain(format!("{} {what}", go_quote(&p.openapi())))
}

/// Keeps the failing branch that matched most (the first of equals): its errors are the ones
/// reported with the junctor's.
fn keep_best(best: &mut Option<VRes>, r: VRes) {
    if best.as_ref().is_none_or(|b| r.matches > b.matches) {
        *best = Some(r);
    }
}

/// `anyOf`: the first valid branch wins; otherwise the error, and the errors of the branch that
/// matched most.
fn any_of_validate(any_of: &[Node], d: &Value, p: &VPath, main: &mut VRes) {
    let mut best: Option<VRes> = None;
    for s in any_of {
        let r = schema_validate(s, d, p, None);
        if r.is_valid() {
            main.merge(r);
            return;
        }
        keep_best(&mut best, r);
    }
    main.add(junctor_err(p, "must validate at least one schema (anyOf)"));
    if let Some(b) = best {
        main.merge(b);
    }
}

/// `oneOf`: exactly one branch must be valid; with none, the errors of the branch that matched
/// most are reported too.
fn one_of_validate(one_of: &[Node], d: &Value, p: &VPath, main: &mut VRes) {
    let mut best: Option<VRes> = None;
    let mut first_success: Option<VRes> = None;
    let mut validated = 0;
    for s in one_of {
        let r = schema_validate(s, d, p, None);
        if r.is_valid() {
            validated += 1;
            best = None;
            first_success.get_or_insert(r);
            continue;
        }
        if validated == 0 {
            keep_best(&mut best, r);
        }
    }
    if validated == 1 {
        if let Some(f) = first_success {
            main.merge(f);
        }
        return;
    }
    let extra = if validated == 0 {
        "Found none valid".to_string()
    } else {
        format!("Found {validated} valid alternatives")
    };
    let what = format!("must validate one and only one schema (oneOf). {extra}");
    main.add(junctor_err(p, &what));
    if let Some(b) = best {
        main.merge(b);
    }
}

/// `allOf`: every branch's errors, and one more unless all are valid.
fn all_of_validate(all_of: &[Node], d: &Value, p: &VPath, main: &mut VRes) {
    let mut validated = 0;
    for s in all_of {
        let r = schema_validate(s, d, p, None);
        if r.is_valid() {
            validated += 1;
        }
        main.merge(r);
    }
    if validated != all_of.len() {
        let extra = if validated == 0 {
            ". None validated"
        } else {
            ""
        };
        let what = format!("must validate all the schemas (allOf){extra}");
        main.add(junctor_err(p, &what));
    }
}

fn string_validate(n: &Node, s: &str, d: &Value, p: &VPath, r: &mut VRes) {
    if let Some(max) = n.max_length {
        // Byte length bounds the character count: count only when it can matter.
        if s.len() as i64 > max && s.chars().count() as i64 > max {
            let msg = |path: &str| format!("{path} in body should be at most {max} chars long");
            return r.add(num_err(Code::TooLong, p, msg, d).with_valid(max));
        }
    }
    if let Some(min) = n.min_length {
        if (s.chars().count() as i64) < min {
            let msg = |path: &str| format!("{path} in body should be at least {min} chars long");
            return r.add(num_err(Code::Other, p, msg, d).with_valid(min));
        }
    }
    if let Some(re) = &n.pattern {
        let shown = match &re.compiled {
            Ok(re) if re.is_match(s) => return,
            Ok(_) => re.source.clone(),
            Err(e) => format!("{}, but pattern is invalid: {e}", re.source),
        };
        let path = p.openapi();
        r.add(VErr::new(
            Code::Other,
            path.clone(),
            format!("{path} in body should match '{shown}'"),
            d.clone(),
        ));
    }
}

fn format_validate(n: &Node, s: &str, p: &VPath, r: &mut VRes) {
    if !formats::validates(&n.format, s) {
        r.add(invalid_type(&p.openapi(), &n.format, s));
    }
}

/// `IsValueValidAgainstRange`: whether a number (value or bound) is representable in the
/// schema's type and format; the error is a plain one.
fn range_check(v: GoNum, type_name: &str, format: &str, prefix: &str, p: &VPath) -> Option<VErr> {
    // Go formats the number ('f', shortest) and parses it back as the type; the same answer
    // without the round trip through a string:
    let bad = match (type_name, v) {
        ("integer", GoNum::Int(i)) => format == "int32" && i32::try_from(i).is_err(),
        ("integer", GoNum::Float(f)) => {
            let (lo, hi) = if format == "int32" {
                (f64::from(i32::MIN), f64::from(i32::MAX))
            } else {
                (-9_223_372_036_854_775_808.0, 9_223_372_036_854_775_807.0)
            };
            // 2^63 itself does not fit; -2^63 does.
            f.fract() != 0.0
                || f < lo
                || f > hi
                || (format != "int32" && f >= 9.223_372_036_854_776e18)
        }
        (_, GoNum::Float(f)) if format == "float" || format == "float32" => {
            (f as f32).is_infinite()
        }
        (_, GoNum::Int(i)) if format == "float" || format == "float32" => (i as f32).is_infinite(),
        _ => false,
    };
    if !bad {
        return None;
    }
    let path = p.openapi();
    Some(VErr::plain(if format.is_empty() {
        format!("{prefix} value must be of type {type_name} (default format) in {path}")
    } else {
        format!("{prefix} value must be of type {type_name} with format {format} in {path}")
    }))
}

fn num_err(code: Code, p: &VPath, msg: impl FnOnce(&str) -> String, value: &Value) -> VErr {
    let path = p.openapi();
    let message = msg(&path);
    VErr::new(code, path, message, value.clone())
}

/// Whether `data` is beyond `bound` (above it for an upper bound).
fn bound_violated<T: PartialOrd>(data: T, bound: T, exclusive: bool, upper: bool) -> bool {
    if upper {
        (!exclusive && data > bound) || (exclusive && data >= bound)
    } else {
        (!exclusive && data < bound) || (exclusive && data <= bound)
    }
}

fn bound_err(p: &VPath, bound: String, exclusive: bool, upper: bool, d: &Value) -> VErr {
    let rel = match (upper, exclusive) {
        (true, false) => "less than or equal to",
        (true, true) => "less than",
        (false, false) => "greater than or equal to",
        (false, true) => "greater than",
    };
    num_err(
        Code::Other,
        p,
        |path| format!("{path} in body should be {rel} {bound}"),
        d,
    )
}

/// A JSON number for a float (`null` for NaN and infinities, as Go's nil).
fn float_value(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// A number being validated, with the type and format its checks use.
struct NumCheck<'a> {
    v: GoNum,
    d: &'a Value,
    p: &'a VPath<'a>,
    type_name: &'static str,
    format: &'a str,
}

impl NumCheck<'_> {
    /// Checks that `bound` (of a `prefix` keyword) is representable in the type and format,
    /// adding the plain error if not; true when it is, and the value is compared natively.
    fn native_bound(&self, bound: f64, prefix: &str, r: &mut VRes) -> bool {
        match range_check(
            GoNum::Float(bound),
            self.type_name,
            self.format,
            prefix,
            self.p,
        ) {
            Some(e) => {
                r.add(e);
                false
            }
            None => true,
        }
    }

    /// The value an error shows: as sent when compared natively, else converted to a float.
    fn shown(&self, native: bool) -> Value {
        if native {
            self.d.clone()
        } else {
            float_value(self.v.as_f64())
        }
    }
}

/// The type and format the number checks see: formats other than the type's own are ignored.
fn numeric_type(n: &Node) -> (&'static str, &str) {
    let own = |formats: [&str; 2]| {
        if formats.contains(&n.format.as_str()) {
            n.format.as_str()
        } else {
            ""
        }
    };
    match n.types.as_slice() {
        ["integer"] => ("integer", own(["int32", "int64"])),
        ["number"] => ("number", own(["float", "double"])),
        _ => ("", ""),
    }
}

/// The number checks, each result in kube-openapi's merge order: range, multipleOf, minimum,
/// maximum.
fn number_validate(n: &Node, v: GoNum, d: &Value, p: &VPath, r: &mut VRes) {
    let (type_name, format) = numeric_type(n);
    let num = NumCheck {
        v,
        d,
        p,
        type_name,
        format,
    };
    if let Some(e) = range_check(v, type_name, format, "Checked", p) {
        r.add(e);
    }
    if let Some(m) = n.multiple_of {
        multiple_of_validate(&num, m, r);
    }
    if let Some(b) = n.minimum {
        bound_validate(&num, b, n.exclusive_minimum, false, r);
    }
    if let Some(b) = n.maximum {
        bound_validate(&num, b, n.exclusive_maximum, true, r);
    }
    r.inc();
}

/// `multipleOf`: integers against an integer factor, everything else in floating point.
fn multiple_of_validate(num: &NumCheck, m: f64, r: &mut VRes) {
    let native = num.native_bound(m, "MultipleOf", r);
    let p = num.p;
    let err = match (native, num.v) {
        (true, GoNum::Int(i)) => {
            let factor = m as i64;
            if factor <= 0 {
                Some(num_err(
                    Code::Other,
                    p,
                    |path| {
                        format!("factor MultipleOf declared for {path} must be positive: {factor}")
                    },
                    &Value::from(factor),
                ))
            } else if i.wrapping_div(factor).wrapping_mul(factor) != i {
                Some(num_err(
                    Code::Other,
                    p,
                    |path| format!("{path} in body should be a multiple of {factor}"),
                    num.d,
                ))
            } else {
                None
            }
        }
        _ => float_multiple_of_error(num, m, native),
    };
    if let Some(e) = err {
        r.add(e);
    }
}

/// `multipleOf` in floating point (the factor's inverse for factors below 1, as kube-openapi).
fn float_multiple_of_error(num: &NumCheck, m: f64, native: bool) -> Option<VErr> {
    let shown = go_float_v(m);
    if m <= 0.0 {
        return Some(num_err(
            Code::Other,
            num.p,
            |path| format!("factor MultipleOf declared for {path} must be positive: {shown}"),
            &float_value(m),
        ));
    }
    let data = num.v.as_f64();
    let mult = if m < 1.0 { 1.0 / m * data } else { data / m };
    if is_float_json_integer(mult) {
        return None;
    }
    Some(num_err(
        Code::Other,
        num.p,
        |path| format!("{path} in body should be a multiple of {shown}"),
        &num.shown(native),
    ))
}

/// `minimum`/`maximum` (`upper`), exclusive or not: natively for integers, else as floats.
fn bound_validate(num: &NumCheck, b: f64, exclusive: bool, upper: bool, r: &mut VRes) {
    let prefix = if upper {
        "Maximum boundary"
    } else {
        "Minimum boundary"
    };
    let native = num.native_bound(b, prefix, r);
    match (native, num.v) {
        (true, GoNum::Int(i)) => {
            let bi = b as i64;
            if bound_violated(i, bi, exclusive, upper) {
                r.add(bound_err(num.p, bi.to_string(), exclusive, upper, num.d));
            }
        }
        _ => {
            if bound_violated(num.v.as_f64(), b, exclusive, upper) {
                let value = num.shown(native);
                r.add(bound_err(num.p, go_float_v(b), exclusive, upper, &value));
            }
        }
    }
}

/// reflect's `ConvertibleTo` + `DeepEqual` as the enum check uses them.
fn enum_matches(d: &Value, e: &Value) -> bool {
    match (e, d) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::String(es), Value::String(ds)) => es == ds,
        (Value::String(es), Value::Number(_)) => match GoNum::of(d) {
            // Go converts integers to strings as runes.
            Some(GoNum::Int(i)) => {
                let c = u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                es.chars().eq(std::iter::once(c))
            }
            _ => false,
        },
        (Value::Number(_), Value::Number(_)) => match (GoNum::of(e), GoNum::of(d)) {
            (Some(GoNum::Int(ei)), Some(GoNum::Int(di))) => ei == di,
            (Some(GoNum::Int(ei)), Some(GoNum::Float(df))) => df as i64 == ei,
            (Some(GoNum::Float(ef)), Some(x)) => x.as_f64() == ef,
            _ => false,
        },
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Array(_), Value::Array(_)) | (Value::Object(_), Value::Object(_)) => e == d,
        _ => false,
    }
}

fn go_slice_v(vals: &[Value]) -> String {
    let parts: Vec<String> = vals
        .iter()
        .map(|v| match v {
            Value::String(s) => s.clone(),
            Value::Null => "<nil>".into(),
            Value::Number(_) => GoNum::of(v).map(go_num_v).unwrap_or_default(),
            other => go_json(other),
        })
        .collect();
    format!("[{}]", parts.join(" "))
}

fn enum_validate(n: &Node, d: &Value, p: &VPath, r: &mut VRes) {
    if n.enum_values.is_empty() || n.enum_values.iter().any(|e| enum_matches(d, e)) {
        return;
    }
    let path = p.openapi();
    let mut e = VErr::new(
        Code::Enum,
        path.clone(),
        format!(
            "{path} in body should be one of {}",
            go_slice_v(&n.enum_values)
        ),
        d.clone(),
    );
    e.values = n.enum_values.clone();
    r.add(e);
}

/// `minItems`/`maxItems` and `minProperties`/`maxProperties`: the same check on a count of
/// `noun`, with the code the apiserver gives a count over the maximum.
fn size_bounds(
    len: usize,
    min: Option<i64>,
    max: Option<i64>,
    noun: &str,
    too_many: Code,
    p: &VPath,
    res: &mut VRes,
) {
    let size = len as i64;
    if let Some(min) = min.filter(|m| size < *m) {
        let msg = |path: &str| format!("{path} in body should have at least {min} {noun}");
        res.add(num_err(Code::Other, p, msg, &Value::from(size)).with_valid(min));
    }
    if let Some(max) = max.filter(|m| size > *m) {
        let msg = |path: &str| format!("{path} in body should have at most {max} {noun}");
        res.add(num_err(too_many, p, msg, &Value::from(size)).with_valid(max));
    }
}

fn slice_validate(n: &Node, a: &[Value], p: &VPath, old: Option<&Value>, res: &mut VRes) {
    if let Some(items) = &n.items {
        for (i, x) in a.iter().enumerate() {
            let cp = p.child(Seg::Index(i));
            let child_old = old.and_then(|o| correlate_index(n, a, o, i));
            validate_child_into(items, x, &cp, child_old, res);
        }
    }
    size_bounds(
        a.len(),
        n.min_items,
        n.max_items,
        "items",
        Code::MaxItems,
        p,
        res,
    );
    if n.unique_items {
        let dup = a
            .iter()
            .enumerate()
            .any(|(i, x)| a[..i].iter().any(|y| y == x));
        if dup {
            res.add(num_err(
                Code::Other,
                p,
                |path| format!("{path} in body shouldn't contain duplicates"),
                &Value::Null,
            ));
        }
    }
    res.inc();
}

fn object_validate(
    n: &Node,
    m: &Map<String, Value>,
    p: &VPath,
    old: Option<&Value>,
    res: &mut VRes,
) {
    size_bounds(
        m.len(),
        n.min_properties,
        n.max_properties,
        "properties",
        Code::TooManyProperties,
        p,
        res,
    );
    let forbid_additional = matches!(n.additional, Some(Additional::Bool(false)));
    let mut props = n.prop_cursor(m.len());
    for (k, v) in m {
        if let Some(prop) = props.get(k) {
            let cp = p.child(Seg::Prop(k));
            let child_old = match old {
                Some(o) if !(p.is_root() && (k == "kind" || k == "apiVersion")) => {
                    correlate_key(n, o, k)
                }
                _ => None,
            };
            validate_child_into(prop, v, &cp, child_old, res);
        } else if forbid_additional {
            let path = p.openapi();
            res.add(VErr::new(
                Code::Other,
                path.clone(),
                format!("{path}.{k} in body is a forbidden property"),
                Value::String(k.clone()),
            ));
        } else if let Some(Additional::Schema(s)) = &n.additional {
            let cp = p.child(Seg::Key(k));
            let child_old = old.and_then(|o| correlate_key(n, o, k));
            validate_child_into(s, v, &cp, child_old, res);
        }
    }
    for k in &n.required {
        if !m.contains_key(k) {
            let name = format!("{}.{k}", p.openapi());
            let message = format!("{name} in body is required");
            res.add(VErr::new(Code::Required, name, message, Value::Null));
        }
    }
}

/// `SchemaValidator.Validate`. `old` is the correlated old value when ratcheting (the Go
/// validator then carries the ratcheting hooks for its children); junctor branches never do.
pub fn schema_validate(n: &Node, d: &Value, p: &VPath, old: Option<&Value>) -> VRes {
    let mut r = VRes::default();
    schema_validate_into(n, d, p, old, &mut r);
    r
}

/// [`schema_validate`], merging the result into `r`. The validators add their errors and
/// matches to `r` directly: merging a separate result adds the same errors, de-duplicated the
/// same way, in the same order, so only the allocation-free happy path is new.
fn schema_validate_into(n: &Node, d: &Value, p: &VPath, old: Option<&Value>, r: &mut VRes) {
    let Some(kind) = kind_of(d) else {
        type_validate(n, d, p, r);
        enum_validate(n, d, p, r);
        return;
    };
    if !n.types.is_empty() || !n.format.is_empty() {
        type_validate(n, d, p, r);
        r.inc();
    }
    if n.any_of.is_empty() && n.one_of.is_empty() && n.all_of.is_empty() && n.not.is_none() {
        // What `junctors_validate` does without junctors.
        r.inc();
    } else {
        junctors_validate(n, d, p, r);
    }
    r.inc();
    if let Value::String(s) = d {
        string_validate(n, s, d, p, r);
        r.inc();
        if n.format_known {
            format_validate(n, s, p, r);
            r.inc();
        }
    }
    if matches!(kind, Kind::Int | Kind::Float) {
        if let Some(v) = GoNum::of(d) {
            number_validate(n, v, d, p, r);
            r.inc();
        }
    }
    if let Value::Array(a) = d {
        slice_validate(n, a, p, old, r);
        r.inc();
    }
    if !n.enum_values.is_empty() {
        enum_validate(n, d, p, r);
    }
    r.inc();
    if let Value::Object(m) = d {
        object_validate(n, m, p, old, r);
        r.inc();
    }
    r.inc();
}

/// A property/index validator: ratcheting when the value correlates to an old value (errors are
/// dropped when the value is unchanged), plain otherwise.
pub fn validate_child(n: &Node, d: &Value, p: &VPath, old: Option<&Value>) -> VRes {
    let mut r = VRes::default();
    validate_child_into(n, d, p, old, &mut r);
    r
}

/// [`validate_child`], merging the result into `r`.
fn validate_child_into(n: &Node, d: &Value, p: &VPath, old: Option<&Value>, r: &mut VRes) {
    match old {
        None => schema_validate_into(n, d, p, None, r),
        Some(o) => {
            // Ratcheting looks at the child's own errors: it needs a result of its own.
            let mut child = schema_validate(n, d, p, Some(o));
            if !child.is_valid() && correlated_equal(n, d, o) {
                child.errors.clear();
            }
            r.merge(child);
        }
    }
}

/// `CorrelatedObject.Key`: the old value of field `k`, when the schema knows the field.
fn correlate_key<'o>(n: &Node, old: &'o Value, k: &str) -> Option<&'o Value> {
    let ov = old.as_object()?.get(k)?;
    n.field(k)?;
    Some(ov)
}

/// The scalar key values of a map-list element, or None when a key is missing or not scalar.
fn map_key<'v>(keys: &[String], elem: &'v Value) -> Option<Vec<&'v Value>> {
    let m = elem.as_object()?;
    keys.iter()
        .map(|k| {
            m.get(k)
                .filter(|v| matches!(v, Value::Bool(_) | Value::Number(_) | Value::String(_)))
        })
        .collect()
}

/// `CorrelatedObject.Index`: for `x-kubernetes-list-type: map`, the old element with the same
/// keys; other lists do not correlate by index.
fn correlate_index<'o>(n: &Node, new: &[Value], old: &'o Value, i: usize) -> Option<&'o Value> {
    let old_list = old.as_array()?;
    let elem = new.get(i)?;
    if n.list_type.as_deref() != Some("map") {
        return None;
    }
    if n.ty != "array" || n.list_map_keys.is_empty() || old_list.is_empty() {
        return None;
    }
    n.items.as_ref()?;
    let key = map_key(&n.list_map_keys, elem)?;
    old_list
        .iter()
        .find(|o| map_key(&n.list_map_keys, o).as_ref() == Some(&key))
}

/// `CorrelatedObject.CachedDeepEqual`: deep equality through the correlation (map lists compare
/// by key; fields unknown to the schema never compare equal).
pub fn correlated_equal(n: &Node, new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return false;
            }
            if n.list_type.as_deref() != Some("map") {
                return a == b;
            }
            for i in 0..a.len() {
                let Some(o) = correlate_index(n, a, old, i) else {
                    return false;
                };
                let Some(items) = &n.items else {
                    return false;
                };
                if !correlated_equal(items, &a[i], o) {
                    return false;
                }
            }
            true
        }
        (Value::Object(a), Value::Object(b)) => {
            if a.len() != b.len() {
                return false;
            }
            a.iter().all(|(k, v)| match (b.get(k), n.field(k)) {
                (Some(o), Some(s)) => correlated_equal(s, v, o),
                _ => false,
            })
        }
        (Value::Array(_), _) | (_, Value::Array(_)) => false,
        (Value::Object(_), _) | (_, Value::Object(_)) => false,
        _ => new == old,
    }
}

/// Validates `d` against `n` from the root (`base` is the field path errors are reported under,
/// None for a whole object), ratcheting against `old` when given.
pub fn validate_value(
    n: &Node,
    d: &Value,
    old: Option<&Value>,
    base: Option<&str>,
) -> Vec<StatusCause> {
    let root = VPath::root();
    let res = match old {
        Some(o) => validate_child(n, d, &root, Some(o)),
        None => schema_validate(n, d, &root, None),
    };
    res.errors.iter().map(|e| e.to_cause(base)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, obj: Value) -> Vec<String> {
        let n = Node::compile(&schema);
        validate_value(&n, &obj, None, None)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    fn crontab() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$"},
            "image": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}}}})
    }

    #[test]
    fn seed_crontab_validation() {
        let errs = check(
            crontab(),
            json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                   "metadata": {"name": "my-new-cron-object"},
                   "spec": {"cronSpec": "* * * *", "image": "my-awesome-cron-image", "replicas": 15}}),
        );
        assert_eq!(
            errs,
            vec![
                r#"spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#,
                "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
            ]
        );
        let ok = check(
            crontab(),
            json!({"spec": {"cronSpec": "* * * * */5", "image": "x", "replicas": 5}}),
        );
        assert!(ok.is_empty(), "{ok:?}");
    }

    #[test]
    fn keyword_messages() {
        let cases: Vec<(Value, Value, Vec<&str>)> = vec![
            (json!({"type": "integer"}), json!("string"),
             vec![r#"<nil>: Invalid value: "string":  in body must be of type integer: "string""#]),
            (json!({"type": "object", "properties": {"x": {"type": "integer"}}}), json!({"x": "a"}),
             vec![r#"x: Invalid value: "string": x in body must be of type integer: "string""#]),
            (json!({"type": "object", "properties": {"x": {"type": "integer"}}}), json!({"x": 1.0}),
             vec![]),
            (json!({"type": "object", "properties": {"x": {"type": "integer"}}}), json!({"x": 1.5}),
             vec![r#"x: Invalid value: "number": x in body must be of type integer: "number""#,
                  r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in x"#]),
            (json!({"type": "object", "required": ["foo"], "properties": {"foo": {"type": "string"}}}), json!({}),
             vec!["foo: Required value"]),
            (json!({"type": "object", "properties": {"s": {"type": "string", "enum": ["a", "b"]}}}), json!({"s": "c"}),
             vec![r#"s: Unsupported value: "c": supported values: "a", "b""#]),
            (json!({"type": "object", "properties": {"s": {"type": "integer", "enum": [1, 2]}}}), json!({"s": 3}),
             vec![r#"s: Unsupported value: 3: supported values: "1", "2""#]),
            (json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 3}}}), json!({"s": "héllo"}),
             vec!["s: Too long: may not be more than 3 bytes"]),
            (json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 5}}}), json!({"s": "héllo"}),
             vec![]),
            (json!({"type": "object", "properties": {"s": {"type": "string", "minLength": 3}}}), json!({"s": "ab"}),
             vec![r#"s: Invalid value: "ab": s in body should be at least 3 chars long"#]),
            (json!({"type": "object", "properties": {"a": {"type": "array", "maxItems": 1, "items": {"type": "string"}}}}), json!({"a": ["x", "y"]}),
             vec!["a: Too many: 2: must have at most 1 item"]),
            (json!({"type": "object", "properties": {"a": {"type": "array", "minItems": 2, "items": {"type": "string"}}}}), json!({"a": ["x"]}),
             vec!["a: Invalid value: 1: a in body should have at least 2 items"]),
            (json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "string"}}}}), json!({"a": ["x", 1]}),
             vec![r#"a[1]: Invalid value: "integer": a[1] in body must be of type string: "integer""#]),
            (json!({"type": "object", "properties": {"m": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}}}}), json!({"m": {"a": "1", "b": "2"}}),
             vec!["m: Too many: 2: must have at most 1 item"]),
            (json!({"type": "object", "properties": {"m": {"type": "object", "minProperties": 1}}}), json!({"m": {}}),
             vec!["m: Invalid value: 0: m in body should have at least 1 properties"]),
            (json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}}), json!({"m": {"k": "v"}}),
             vec![r#"m.k: Invalid value: "string": m.k in body must be of type integer: "string""#]),
            (json!({"type": "object", "properties": {"n": {"type": "number", "multipleOf": 0.5}}}), json!({"n": 1.25}),
             vec!["n: Invalid value: 1.25: n in body should be a multiple of 0.5"]),
            (json!({"type": "object", "properties": {"n": {"type": "integer", "multipleOf": 3}}}), json!({"n": 4}),
             vec!["n: Invalid value: 4: n in body should be a multiple of 3"]),
            (json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "exclusiveMinimum": true}}}), json!({"n": 1}),
             vec!["n: Invalid value: 1: n in body should be greater than 1"]),
            (json!({"type": "object", "properties": {"n": {"type": "number", "maximum": 1000000}}}), json!({"n": 2000000.5}),
             vec!["n: Invalid value: 2.0000005e+06: n in body should be less than or equal to 1e+06"]),
            (json!({"type": "object", "properties": {"n": {"type": "integer", "format": "int32"}}}), json!({"n": 5000000000i64}),
             vec![r#"<nil>: Invalid value: "": Checked value must be of type integer with format int32 in n"#]),
            (json!({"type": "object", "properties": {"u": {"type": "string", "format": "uuid"}}}), json!({"u": "x"}),
             vec![r#"u: Invalid value: "x": u in body must be of type uuid: "x""#]),
            (json!({"type": "object", "properties": {"u": {"type": "string", "format": "foo"}}}), json!({"u": "x"}),
             vec![]),
            (json!({"type": "object", "properties": {"n": {"type": "string"}}}), json!({"n": null}),
             vec![r#"n: Invalid value: "null": n in body must be of type string: "null""#]),
            (json!({"type": "object", "properties": {"n": {"type": "string", "nullable": true}}}), json!({"n": null}),
             vec![]),
            (json!({"type": "object", "properties": {"v": {"x-kubernetes-int-or-string": true}}}), json!({"v": true}),
             vec![r#"v: Invalid value: "boolean": v in body must be of type integer,string: "boolean""#]),
            (json!({"type": "object", "properties": {"v": {"x-kubernetes-int-or-string": true}}}), json!({"v": "25%"}),
             vec![]),
            (json!({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": false}}}), json!({"m": {"a": 1}}),
             vec![r#"m: Invalid value: "a": m.a in body is a forbidden property"#]),
        ];
        for (schema, obj, want) in cases {
            assert_eq!(check(schema.clone(), obj.clone()), want, "{schema} {obj}");
        }
    }

    #[test]
    fn junctor_messages() {
        let s = json!({"type": "object", "properties": {"v": {"type": "integer",
            "anyOf": [{"minimum": 10}, {"maximum": 0}]}}});
        assert_eq!(
            check(s, json!({"v": 5})),
            vec![
                r#"<nil>: Invalid value: "": "v" must validate at least one schema (anyOf)"#,
                "v: Invalid value: 5: v in body should be greater than or equal to 10",
            ]
        );
        let s = json!({"type": "object", "properties": {"v": {"type": "integer",
            "oneOf": [{"minimum": 0}, {"maximum": 10}]}}});
        assert_eq!(
            check(s, json!({"v": 5})),
            vec![
                r#"<nil>: Invalid value: "": "v" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
            ]
        );
        let s = json!({"type": "object", "properties": {"v": {"type": "integer",
            "allOf": [{"minimum": 10}], "not": {"maximum": 0}}}});
        assert_eq!(
            check(s, json!({"v": -1})),
            vec![
                "v: Invalid value: -1: v in body should be greater than or equal to 10",
                r#"<nil>: Invalid value: "": "v" must validate all the schemas (allOf). None validated"#,
                r#"<nil>: Invalid value: "": "v" must not validate the schema (not)"#,
            ]
        );
    }

    #[test]
    fn ratcheting_drops_unchanged_errors() {
        let n = Node::compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object",
            "required": ["a"],
            "properties": {"a": {"type": "string"}, "n": {"type": "integer", "maximum": 3},
                           "m": {"type": "integer", "maximum": 3}}}}}),
        );
        let old = json!({"spec": {"n": 5, "m": 1, "a": "x"}});
        // n unchanged and still invalid: ratcheted; m changed to invalid: reported.
        let new = json!({"spec": {"n": 5, "m": 7, "a": "x"}});
        let errs = validate_value(&n, &new, Some(&old), None);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.m");
        // Without the old object both fail.
        assert_eq!(validate_value(&n, &new, None, None).len(), 2);
        // A required field removed: the parent changed, so the error stays.
        let new = json!({"spec": {"n": 5, "m": 1}});
        let errs = validate_value(&n, &new, Some(&old), None);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "spec.a");
    }

    #[test]
    fn ratcheting_map_lists_correlate_by_key() {
        let n = Node::compile(
            &json!({"type": "object", "properties": {"l": {"type": "array",
            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"},
                "v": {"type": "integer", "maximum": 1}}}}}}),
        );
        let old = json!({"l": [{"name": "a", "v": 5}, {"name": "b", "v": 0}]});
        let new =
            json!({"l": [{"name": "b", "v": 0}, {"name": "a", "v": 5}, {"name": "c", "v": 9}]});
        let errs = validate_value(&n, &new, Some(&old), None);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "l[2].v");
    }

    #[test]
    fn paths_render_keys_two_ways() {
        let root = VPath::root();
        let spec = root.child(Seg::Prop("spec"));
        let map = spec.child(Seg::Key("k.x"));
        let item = map.child(Seg::Index(2));
        assert_eq!(
            (root.openapi(), root.field()),
            (String::new(), String::new())
        );
        assert_eq!(item.openapi(), "spec.k.x[2]");
        assert_eq!(item.field(), "spec[k.x][2]");
    }

    #[test]
    fn error_fields_under_a_base() {
        let err = |code, name: &str| VErr::new(code, name.into(), "m".into(), Value::Null);
        let cases = [
            (err(Code::Other, "spec.a"), None, "spec.a"),
            (err(Code::Other, ".spec.a"), Some("status"), "status.spec.a"),
            (err(Code::Other, "spec.a"), Some(""), "spec.a"),
            (err(Code::Other, "."), None, "<nil>"),
            (err(Code::Required, ""), Some("status"), "status"),
            (err(Code::Plain, "spec.a"), None, "<nil>"),
            (err(Code::Plain, "spec.a"), Some("b"), "b"),
        ];
        for (e, base, want) in cases {
            assert_eq!(e.field(base), want, "{e:?} {base:?}");
        }
    }

    #[test]
    fn numeric_types_and_bounds() {
        let cases = [
            (
                json!({"type": "integer", "format": "int32"}),
                ("integer", "int32"),
            ),
            (
                json!({"type": "integer", "format": "float"}),
                ("integer", ""),
            ),
            (
                json!({"type": "number", "format": "double"}),
                ("number", "double"),
            ),
            (json!({"type": "number"}), ("number", "")),
            (json!({"x-kubernetes-int-or-string": true}), ("", "")),
        ];
        for (schema, want) in cases {
            assert_eq!(numeric_type(&Node::compile(&schema)), want, "{schema}");
        }
        let bounds = [
            (5, 5, false, true, false),
            (5, 5, true, true, true),
            (6, 5, false, true, true),
            (4, 5, false, false, true),
            (5, 5, true, false, true),
            (5, 5, false, false, false),
        ];
        for (data, bound, exclusive, upper, want) in bounds {
            assert_eq!(bound_violated(data, bound, exclusive, upper), want);
            assert_eq!(
                bound_violated(f64::from(data), f64::from(bound), exclusive, upper),
                want
            );
        }
    }
}
