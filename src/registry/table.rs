//! Server-side printing: `meta.k8s.io/v1 Table` responses for get, list and watch. Each
//! resource declares its [`Columns`] (a CRD's `additionalPrinterColumns`, the default `Age`, the
//! columns of a built-in kind), compiled once when the resource is built.

use std::borrow::Cow;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

use super::jsonpath::JsonPath;

/// `metadata.name`'s description, as the apiserver publishes it for the Name column.
const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
/// `metadata.creationTimestamp`'s description, for Age / Created At columns.
const CREATED_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// What each row carries besides its cells (`includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    /// No object.
    None,
    /// `PartialObjectMetadata` (the default).
    Metadata,
    /// The whole object.
    Object,
}

impl IncludeObject {
    /// Parses `includeObject`; unknown values mean the default, as in the apiserver.
    pub fn parse(v: Option<&str>) -> IncludeObject {
        match v {
            Some("None") => IncludeObject::None,
            Some("Object") => IncludeObject::Object,
            _ => IncludeObject::Metadata,
        }
    }
}

/// How one column's cell is computed.
#[derive(Debug, Clone)]
enum Cell {
    Name,
    /// Human-readable age of `metadata.creationTimestamp`.
    Age,
    /// RFC 3339 creation time (the default table convertor's "Created At").
    CreatedAt,
    /// A printer column: JSONPath and type.
    Path(JsonPath, String),
    /// A cell computed by the kind's printer (`kubectl get`'s columns of built-in kinds).
    Computed(fn(&Value) -> Value),
}

/// One column: its definition in the Table and how its cells are computed.
pub struct Column {
    definition: Definition,
    cell: Cell,
}

/// A column's definition as declared: the built-in kinds' are all literals, so declaring
/// them (every kind's, at start) copies nothing; the JSON is rendered when a Table first
/// names its columns.
struct Definition {
    name: Cow<'static, str>,
    type_: Cow<'static, str>,
    format: Cow<'static, str>,
    description: Cow<'static, str>,
    priority: i64,
}

fn definition(
    name: impl Into<Cow<'static, str>>,
    type_: impl Into<Cow<'static, str>>,
    format: impl Into<Cow<'static, str>>,
    description: impl Into<Cow<'static, str>>,
    priority: i64,
) -> Definition {
    Definition {
        name: name.into(),
        type_: type_.into(),
        format: format.into(),
        description: description.into(),
        priority,
    }
}

impl Definition {
    /// The `TableColumnDefinition`.
    fn render(&self) -> Value {
        json!({
            "name": self.name,
            "type": self.type_,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        })
    }
}

impl Column {
    /// The Name column every Table starts with.
    pub fn name() -> Column {
        Column {
            definition: definition("Name", "string", "name", NAME_DESCRIPTION, 0),
            cell: Cell::Name,
        }
    }

    /// The Name column with a cell the kind computes (a default class's name marked
    /// `(default)`, as kubectl shows it).
    pub fn name_computed(cell: fn(&Value) -> Value) -> Column {
        Column {
            definition: definition("Name", "string", "name", NAME_DESCRIPTION, 0),
            cell: Cell::Computed(cell),
        }
    }

    /// An Age column (`metadata.creationTimestamp` as kubectl prints durations), declared with
    /// the given column type (`date` for the default columns, `string` for some built-ins).
    pub fn age(type_: &'static str) -> Column {
        Column {
            definition: definition("Age", type_, "", CREATED_DESCRIPTION, 0),
            cell: Cell::Age,
        }
    }

    /// A column computed from a JSONPath, its value shown as the column's type.
    pub fn path(
        name: &str,
        type_: &str,
        format: &str,
        description: &str,
        priority: i64,
        json_path: &str,
    ) -> Column {
        Column {
            definition: definition(
                name.to_string(),
                type_.to_string(),
                format.to_string(),
                description.to_string(),
                priority,
            ),
            cell: Cell::Path(JsonPath::parse(json_path), type_.to_string()),
        }
    }
}

impl Column {
    /// A column whose cells the kind computes, as the apiserver's printers of built-in kinds do
    /// (a ConfigMap's number of data entries, a Pod's ready containers).
    pub fn computed(
        name: &'static str,
        type_: &'static str,
        priority: i64,
        description: impl Into<Cow<'static, str>>,
        cell: fn(&Value) -> Value,
    ) -> Column {
        Column {
            definition: definition(name, type_, "", description, priority),
            cell: Cell::Computed(cell),
        }
    }
}

/// The column definitions and cell rules of one served resource: its Table convertor, built
/// once when the resource is (never per request).
pub struct Columns {
    columns: Vec<Column>,
    /// The columns' definitions as JSON, rendered by the first Table that names them: most
    /// resources of a test's server never serve a Table.
    definitions: OnceLock<Vec<Value>>,
}

impl Columns {
    /// A convertor from its columns.
    pub fn new(columns: Vec<Column>) -> Columns {
        Columns {
            columns,
            definitions: OnceLock::new(),
        }
    }

    /// The `columnDefinitions` of every Table of this resource.
    fn definitions(&self) -> &[Value] {
        self.definitions
            .get_or_init(|| self.columns.iter().map(|c| c.definition.render()).collect())
    }

    /// The apiserver's default convertor: Name and "Created At".
    pub fn default_columns() -> Columns {
        Columns::new(vec![
            Column::name(),
            Column {
                definition: definition("Created At", "date", "", CREATED_DESCRIPTION, 0),
                cell: Cell::CreatedAt,
            },
        ])
    }

    /// The convertor of a custom resource version: Name, then its `additionalPrinterColumns`,
    /// or Name and Age when it declares none.
    pub fn from_printer_columns(printer: &[Value]) -> Columns {
        let mut columns = vec![Column::name()];
        if printer.is_empty() {
            columns.push(Column::age("date"));
        }
        for col in printer {
            columns.push(Column::path(
                col["name"].as_str().unwrap_or(""),
                col["type"].as_str().unwrap_or("string"),
                col["format"].as_str().unwrap_or(""),
                col["description"].as_str().unwrap_or(""),
                col["priority"].as_i64().unwrap_or(0),
                col["jsonPath"].as_str().unwrap_or(""),
            ));
        }
        Columns::new(columns)
    }

    fn cells(&self, obj: &Value) -> Vec<Value> {
        let meta = &obj["metadata"];
        self.columns
            .iter()
            .map(|c| match &c.cell {
                Cell::Name => meta["name"].clone(),
                Cell::Age => json!(age(meta["creationTimestamp"].as_str())),
                Cell::CreatedAt => meta["creationTimestamp"].clone(),
                Cell::Computed(f) => f(obj),
                Cell::Path(path, type_) => match path.first(obj) {
                    None | Some(Value::Null) => Value::Null,
                    Some(v) => typed_cell(type_, v),
                },
            })
            .collect()
    }

    /// A Table of `objects`.
    pub fn table(
        &self,
        objects: &[&Value],
        rv: &str,
        include: IncludeObject,
        with_definitions: bool,
    ) -> Value {
        let rows: Vec<Value> = objects
            .iter()
            .map(|obj| {
                let mut row = json!({"cells": self.cells(obj)});
                match include {
                    IncludeObject::None => {}
                    IncludeObject::Object => row["object"] = (*obj).clone(),
                    IncludeObject::Metadata => row["object"] = partial_metadata(obj),
                }
                row
            })
            .collect();
        let mut meta = Map::new();
        if !rv.is_empty() {
            meta.insert("resourceVersion".into(), json!(rv));
        }
        let mut table = json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta});
        if with_definitions {
            table["columnDefinitions"] = Value::Array(self.definitions().to_vec());
        }
        table["rows"] = Value::Array(rows);
        table
    }
}

fn partial_metadata(obj: &Value) -> Value {
    json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj["metadata"]})
}

/// `cellForJSONValue`: the value in the column's type, or empty when it is not of that type.
fn typed_cell(type_: &str, v: &Value) -> Value {
    match type_ {
        "integer" => match v {
            Value::Number(n) => n
                .as_i64()
                .map(Value::from)
                .or_else(|| n.as_f64().map(|f| Value::from(f as i64)))
                .unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "number" => v.as_f64().map(Value::from).unwrap_or(Value::Null),
        "boolean" => v.as_bool().map(Value::from).unwrap_or(Value::Null),
        "date" => match v.as_str() {
            Some(s) => match chrono::DateTime::parse_from_rfc3339(s) {
                Ok(_) => json!(age(Some(s))),
                Err(_) => json!("<invalid>"),
            },
            None => Value::Null,
        },
        _ => json!(print_value(v)),
    }
}

/// A value as the JSONPath printer prints it: strings bare, everything else as JSON.
fn print_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `duration.HumanDuration` of the time since `timestamp` (`<unknown>` without one).
pub fn age(timestamp: Option<&str>) -> String {
    let Some(t) = timestamp.and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()) else {
        return "<unknown>".into();
    };
    human_duration(chrono::Utc::now().signed_duration_since(t).num_seconds())
}

/// `k8s.io/apimachinery/pkg/util/duration.HumanDuration`, from whole seconds.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_like_kubectl() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (125, "2m5s"),
            (600, "10m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60, "3h1m"),
            (47 * 3600, "47h"),
            (3 * 86400 + 3600, "3d1h"),
            (30 * 86400, "30d"),
            (3 * 365 * 86400 + 86400, "3y1d"),
            (10 * 365 * 86400, "10y"),
        ];
        for (s, want) in cases {
            assert_eq!(human_duration(s), want, "{s}");
        }
    }

    #[test]
    fn typed_cells() {
        assert_eq!(typed_cell("integer", &json!(3)), json!(3));
        assert_eq!(typed_cell("integer", &json!(3.7)), json!(3));
        assert_eq!(typed_cell("integer", &json!("3")), Value::Null);
        assert_eq!(typed_cell("boolean", &json!(true)), json!(true));
        assert_eq!(typed_cell("string", &json!({"a": 1})), json!("{\"a\":1}"));
        assert_eq!(typed_cell("date", &json!("nope")), json!("<invalid>"));
    }
}
