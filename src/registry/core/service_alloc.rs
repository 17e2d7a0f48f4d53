//! Cluster IPs and node ports of core/v1 Services, allocated as the apiserver's allocators do
//! (`pkg/registry/core/service/storage/alloc.go`, `ipallocator/cidrallocator.go`): from the
//! IPv4 ranges of the ServiceCIDRs (the default `kubernetes` one first; one whose `Ready`
//! condition is not true is skipped, one without conditions is usable) and the node port range
//! `30000-32767`, a requested value when it is free and in range, else a random free one, from
//! the upper part of a range first (the lower part, a sixteenth of the range between 16 and
//! 256 addresses, and 86 ports, is kept for static requests while the upper part has room).
//!
//! The allocators' state is the store itself: [`allocate`] runs inside the store's write
//! ([`crate::registry::strategy::Strategy::allocate`]) and reads what the Services and the
//! IPAddresses stored in that write's snapshot hold, so two Services never get the same IP or
//! port, an IP a client reserved with an IPAddress of its own is not handed out, and a deleted
//! Service's are free again at once. The IPAddress objects of the Services' own IPs are kept in
//! step after the write ([`crate::controllers::service_ips`]). A dry run allocates nothing and
//! shows what the apiserver's dry-run allocators show (the network address as the IP, node
//! ports from 32769 up).

use std::collections::{HashMap, HashSet};
use std::net::Ipv4Addr;

use serde_json::{json, Value};

use super::service::{needs_health_check, strings, svc_type};
use crate::error::{field, ApiError};
use crate::registry::object_meta::meta_str;
use crate::store::{GroupResource, Snapshot};

/// kubefake's default service CIDR (kubeadm's; a default apiserver's, and envtest's, is
/// `10.0.0.0/24`, which `--service-cluster-ip-range` gives).
pub const SERVICE_CIDR: &str = "10.96.0.0/12";

/// An IPv4 service range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    base: u32,
    /// How many addresses: up to 2^32 (`0.0.0.0/0`).
    size: u64,
}

impl Range {
    /// An IPv4 CIDR in canonical form (`10.96.0.0/12`), with room for at least one address.
    pub fn parse(cidr: &str) -> Option<Range> {
        let (ip, bits) = cidr.split_once('/')?;
        let base = u32::from(ip.parse::<Ipv4Addr>().ok()?);
        let prefix: u32 = bits.parse().ok().filter(|p| *p <= 30)?;
        let size = 1u64 << (32 - prefix);
        (u64::from(base) & (size - 1) == 0).then_some(Range { base, size })
    }

    /// The first usable address: the `kubernetes` Service's.
    pub fn first(&self) -> String {
        Ipv4Addr::from(self.base.saturating_add(1)).to_string()
    }

    /// The first and last addresses that may be allocated (not the network's, nor the
    /// broadcast address); a range has at least four addresses.
    fn usable(&self) -> (u32, u32) {
        let last = u64::from(self.base) + self.size - 2;
        (self.base + 1, u32::try_from(last).unwrap_or(u32::MAX))
    }

    /// Whether an address may be allocated.
    fn holds(&self, addr: u32) -> bool {
        let (first, last) = self.usable();
        (first..=last).contains(&addr)
    }

    /// The range as a CIDR.
    fn cidr(&self) -> String {
        format!(
            "{}/{}",
            Ipv4Addr::from(self.base),
            32 - self.size.trailing_zeros()
        )
    }

    /// Addresses at the start kept for static requests (`calculateRangeOffset`).
    fn offset(&self) -> u32 {
        u32::try_from((self.size / 16).clamp(16, 256)).unwrap_or(256)
    }
}

/// The ranges Services get their IPs from: the IPv4 CIDRs of the usable ServiceCIDRs, the
/// default one first.
pub fn ranges(view: &Snapshot) -> Vec<Range> {
    let mut cidrs: Vec<(bool, String, Range)> = Vec::new();
    for (key, obj) in view.list(
        &GroupResource::new("networking.k8s.io", "servicecidrs"),
        None,
    ) {
        let obj = obj.value();
        let conditions = obj["status"]["conditions"].as_array().into_iter().flatten();
        let not_ready = conditions
            .into_iter()
            .any(|c| c["type"] == "Ready" && c["status"] != "True");
        if not_ready || !obj["metadata"]["deletionTimestamp"].is_null() {
            continue;
        }
        for cidr in strings(&obj["spec"]["cidrs"]) {
            if let Some(range) = Range::parse(&cidr) {
                cidrs.push((key.name != DEFAULT_SERVICE_CIDR, key.name.clone(), range));
            }
        }
    }
    cidrs.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    cidrs.into_iter().map(|(_, _, r)| r).collect()
}

/// The ServiceCIDR the apiserver makes of `--service-cluster-ip-range`.
pub const DEFAULT_SERVICE_CIDR: &str = "kubernetes";
/// The node port range.
pub const NODE_PORTS: std::ops::RangeInclusive<i64> = 30000..=32767;
/// Ports at the start of the node port range kept for static requests.
const PORT_OFFSET: i64 = 86;

/// The IP family of an address.
pub fn family_of(ip: &str) -> &'static str {
    if ip.contains(':') {
        "IPv6"
    } else {
        "IPv4"
    }
}

/// Whether the Service gets node ports (`needsNodePort` of the service storage).
pub fn needs_node_ports(svc: &Value) -> bool {
    match svc_type(svc) {
        "NodePort" => true,
        "LoadBalancer" => svc["spec"]["allocateLoadBalancerNodePorts"] != false,
        _ => false,
    }
}

/// The non-zero node ports of a Service's ports.
pub fn node_ports_of(svc: &Value) -> Vec<i64> {
    svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["nodePort"].as_i64().filter(|n| *n != 0))
        .collect()
}

/// What the other Services hold, and the ranges there are.
struct Used {
    ips: HashSet<u32>,
    ports: HashSet<i64>,
    ranges: Vec<Range>,
    /// Whether there is any ServiceCIDR, usable or not.
    cidrs_exist: bool,
}

impl Used {
    fn scan(view: &Snapshot, svc: &Value) -> Used {
        let namespace = meta_str(svc, "namespace");
        let name = meta_str(svc, "name");
        let mut used = Used {
            ips: HashSet::new(),
            ports: HashSet::new(),
            ranges: ranges(view),
            cidrs_exist: view
                .list(
                    &GroupResource::new("networking.k8s.io", "servicecidrs"),
                    None,
                )
                .next()
                .is_some(),
        };
        // IPs reserved by IPAddresses: the other Services', and any a client created.
        let addresses = GroupResource::new("networking.k8s.io", "ipaddresses");
        for (key, address) in view.list(&addresses, None) {
            let parent = &address.value()["spec"]["parentRef"];
            let own = parent["resource"] == "services"
                && parent["namespace"] == namespace
                && parent["name"] == name;
            if let (false, Ok(addr)) = (own, key.name.parse::<Ipv4Addr>()) {
                used.ips.insert(u32::from(addr));
            }
        }
        for (key, other) in view.list(&GroupResource::new("", "services"), None) {
            if key.namespace == namespace && key.name == name {
                continue;
            }
            let other = &other.value();
            for ip in strings(&other["spec"]["clusterIPs"]) {
                if let Ok(addr) = ip.parse::<Ipv4Addr>() {
                    used.ips.insert(u32::from(addr));
                }
            }
            used.ports.extend(node_ports_of(other));
            if let Some(hc) = other["spec"]["healthCheckNodePort"].as_i64() {
                used.ports.insert(hc);
            }
        }
        used
    }
}

/// Allocates what a Service being created (`old` is `None`) or updated needs.
pub fn allocate(
    view: &Snapshot,
    svc: &mut Value,
    old: Option<&Value>,
    dry_run: bool,
) -> Result<(), ApiError> {
    let used = Used::scan(view, svc);
    allocate_cluster_ips(svc, old, &used, dry_run)?;
    let mut op = PortOperation {
        used: &used.ports,
        taken: Vec::new(),
        dry_run,
    };
    if matches!(svc_type(svc), "NodePort" | "LoadBalancer") {
        match old {
            None => init_node_ports(svc, &mut op)?,
            Some(old) => update_node_ports(svc, old, &mut op)?,
        }
    }
    let newly_needed = old.is_none_or(|o| !needs_health_check(o));
    if needs_health_check(svc) && newly_needed {
        allocate_health_check_port(svc, &mut op)?;
    }
    Ok(())
}

fn invalid(svc: &Value, path: &str, value: &Value, detail: &str) -> ApiError {
    ApiError::invalid(
        "",
        "Service",
        meta_str(svc, "name"),
        vec![field::invalid(path, value, detail)],
    )
}

/// Cluster IPs for a new Service, or one that stops being an ExternalName.
fn allocate_cluster_ips(
    svc: &mut Value,
    old: Option<&Value>,
    used: &Used,
    dry_run: bool,
) -> Result<(), ApiError> {
    if svc_type(svc) == "ExternalName" || old.is_some_and(|o| svc_type(o) != "ExternalName") {
        return Ok(());
    }
    let mut ips = strings(&svc["spec"]["clusterIPs"]);
    if ips.first().is_some_and(|ip| ip == "None") {
        return Ok(());
    }
    let families = strings(&svc["spec"]["ipFamilies"]);
    ips.resize(families.len().max(ips.len()), String::new());
    for ip in ips.iter_mut().take(families.len()) {
        if ip.is_empty() {
            *ip = next_ip(svc, used, dry_run)?;
        } else {
            check_ip(svc, ip, used, dry_run)?;
        }
    }
    if let Some(first) = ips.first().cloned() {
        svc["spec"]["clusterIP"] = json!(first);
        svc["spec"]["clusterIPs"] = json!(ips);
    }
    Ok(())
}

/// A requested cluster IP must be in a usable range and free. With no ServiceCIDR at all (the
/// `kubernetes` Service is written in the same write as the default ServiceCIDR, where the
/// apiserver waits for that first), a free IP is accepted.
fn check_ip(svc: &Value, ip: &str, used: &Used, dry_run: bool) -> Result<(), ApiError> {
    let detail = |why: &str| format!("failed to allocate IP {ip}: {why}");
    let shown = svc["spec"]["clusterIPs"].clone();
    let addr = ip.parse::<Ipv4Addr>().map(u32::from).ok();
    let in_range = |a: &u32| !used.cidrs_exist || used.ranges.iter().any(|r| r.holds(*a));
    let Some(addr) = addr.filter(in_range) else {
        // A dry run asks the default range's own (bitmap) allocator, which words it so.
        let why = match used.ranges.first() {
            Some(range) if dry_run => detail(&format!(
                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {}",
                range.cidr()
            )),
            _ => detail("the provided network does not match the current range"),
        };
        return Err(invalid(svc, "spec.clusterIPs", &shown, &why));
    };
    if !dry_run && used.ips.contains(&addr) {
        let why = detail("provided IP is already allocated");
        return Err(invalid(svc, "spec.clusterIPs", &shown, &why));
    }
    Ok(())
}

/// A free cluster IP: a random one of a range's upper part, else of its lower part, the
/// ranges in turn.
fn next_ip(svc: &Value, used: &Used, dry_run: bool) -> Result<String, ApiError> {
    if dry_run {
        let base = used.ranges.first().map_or(0, |r| r.base);
        return Ok(Ipv4Addr::from(base).to_string());
    }
    for range in &used.ranges {
        let (first, last) = range.usable();
        let offset = range.offset().min(last - first);
        let upper = first + offset..=last;
        let lower = first..=first + offset - 1;
        for part in [upper, lower] {
            if let Some(ip) = random_free(part, |a| used.ips.contains(&a)) {
                return Ok(Ipv4Addr::from(ip).to_string());
            }
        }
    }
    Err(ApiError::internal(format!(
        "failed to allocate a serviceIP for Service {:?}: range is full",
        meta_str(svc, "name")
    )))
}

/// A value of `range` for which `taken` is false, scanning from a random start and wrapping.
fn random_free<T>(range: std::ops::RangeInclusive<T>, taken: impl Fn(T) -> bool) -> Option<T>
where
    T: Copy + Into<i64> + TryFrom<i64>,
{
    let (lo, hi): (i64, i64) = ((*range.start()).into(), (*range.end()).into());
    let size = hi - lo + 1;
    if size <= 0 {
        return None;
    }
    let start = fastrand::i64(0..size);
    (0..size)
        .map(|i| lo + (start + i) % size)
        .filter_map(|v| T::try_from(v).ok())
        .find(|v| !taken(*v))
}

/// The node ports one write takes, checked against the other Services' and each other.
struct PortOperation<'a> {
    used: &'a HashSet<i64>,
    taken: Vec<i64>,
    dry_run: bool,
}

impl PortOperation<'_> {
    /// A requested port: in range and free.
    fn allocate(&mut self, port: i64) -> Result<(), String> {
        if !self.dry_run && !NODE_PORTS.contains(&port) {
            return Err(format!(
                "provided port is not in the valid range. The range of valid ports is {}-{}",
                NODE_PORTS.start(),
                NODE_PORTS.end()
            ));
        }
        if self.used.contains(&port) || self.taken.contains(&port) {
            return Err("provided port is already allocated".into());
        }
        self.taken.push(port);
        Ok(())
    }

    /// A free port: random in the upper range, else in the lower range.
    fn allocate_next(&mut self) -> Result<i64, String> {
        if self.dry_run {
            let next = self.taken.iter().max().copied().unwrap_or(32768) + 1;
            self.taken.push(next);
            return Ok(next);
        }
        let first = *NODE_PORTS.start();
        let ranges = [
            first + PORT_OFFSET..=*NODE_PORTS.end(),
            first..=first + PORT_OFFSET - 1,
        ];
        for range in ranges {
            let taken = |p: i64| self.used.contains(&p) || self.taken.contains(&p);
            if let Some(port) = random_free(range, taken) {
                self.taken.push(port);
                return Ok(port);
            }
        }
        Err("range is full".into())
    }
}

fn port_at(svc: &Value, i: usize, key: &str) -> i64 {
    svc["spec"]["ports"][i][key].as_i64().unwrap_or(0)
}

fn node_port_error(svc: &Value, i: usize, port: i64, why: &str) -> ApiError {
    invalid(svc, &format!("spec.ports[{i}].nodePort"), &json!(port), why)
}

fn full(why: &str) -> ApiError {
    ApiError::internal(format!("failed to allocate a nodePort: {why}"))
}

/// `initNodePorts`: ports of the same number share a node port; requested ones are taken.
fn init_node_ports(svc: &mut Value, op: &mut PortOperation<'_>) -> Result<(), ApiError> {
    let should_allocate = needs_node_ports(svc);
    let count = svc["spec"]["ports"].as_array().map_or(0, Vec::len);
    let mut by_port: HashMap<i64, i64> = HashMap::new();
    for i in 0..count {
        let (port, node_port) = (port_at(svc, i, "port"), port_at(svc, i, "nodePort"));
        if node_port == 0 && !should_allocate {
            continue;
        }
        match by_port.get(&port).copied() {
            None => {
                let requested = (0..count)
                    .find(|j| port_at(svc, *j, "port") == port && port_at(svc, *j, "nodePort") != 0)
                    .map_or(0, |j| port_at(svc, j, "nodePort"));
                let chosen = if requested != 0 {
                    op.allocate(requested)
                        .map_err(|e| node_port_error(svc, i, requested, &e))?;
                    requested
                } else {
                    op.allocate_next().map_err(|e| full(&e))?
                };
                svc["spec"]["ports"][i]["nodePort"] = json!(chosen);
                by_port.insert(port, chosen);
            }
            Some(shared) if node_port == 0 => svc["spec"]["ports"][i]["nodePort"] = json!(shared),
            Some(shared) if node_port != shared => {
                op.allocate(node_port)
                    .map_err(|e| node_port_error(svc, i, node_port, &e))?;
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `updateNodePorts`: ports the Service held stay; new requests are taken; missing ones are
/// allocated.
fn update_node_ports(
    svc: &mut Value,
    old: &Value,
    op: &mut PortOperation<'_>,
) -> Result<(), ApiError> {
    let should_allocate = needs_node_ports(svc);
    let held = node_ports_of(old);
    let count = svc["spec"]["ports"].as_array().map_or(0, Vec::len);
    for i in 0..count {
        let node_port = port_at(svc, i, "nodePort");
        if node_port == 0 && !should_allocate {
            continue;
        }
        if node_port != 0 {
            if !held.contains(&node_port) && !op.taken.contains(&node_port) {
                op.allocate(node_port)
                    .map_err(|e| node_port_error(svc, i, node_port, &e))?;
            }
        } else {
            let chosen = op.allocate_next().map_err(|e| full(&e))?;
            svc["spec"]["ports"][i]["nodePort"] = json!(chosen);
        }
    }
    Ok(())
}

/// `allocHealthCheckNodePort`.
fn allocate_health_check_port(svc: &mut Value, op: &mut PortOperation<'_>) -> Result<(), ApiError> {
    let requested = svc["spec"]["healthCheckNodePort"].as_i64().unwrap_or(0);
    if requested != 0 {
        return op.allocate(requested).map_err(|e| {
            ApiError::internal(format!(
                "failed to allocate requested HealthCheck NodePort {requested}: {e}"
            ))
        });
    }
    let port = op.allocate_next().map_err(|e| {
        ApiError::internal(format!("failed to allocate a HealthCheck NodePort 0: {e}"))
    })?;
    svc["spec"]["healthCheckNodePort"] = json!(port);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case("10.96.0.0/12", Some(("10.96.0.1", "10.111.255.254", 256)))]
    #[case("10.0.0.0/24", Some(("10.0.0.1", "10.0.0.254", 16)))]
    #[case("0.0.0.0/0", Some(("0.0.0.1", "255.255.255.254", 256)))]
    #[case("10.0.0.0/30", Some(("10.0.0.1", "10.0.0.2", 16)))]
    #[case("10.0.0.0/31", None)]
    #[case("10.0.0.1/24", None)]
    #[case("fd00::/64", None)]
    fn ranges_of_cidrs(#[case] cidr: &str, #[case] want: Option<(&str, &str, u32)>) {
        let got = Range::parse(cidr).map(|r| {
            let (first, last) = r.usable();
            (
                Ipv4Addr::from(first).to_string(),
                Ipv4Addr::from(last).to_string(),
                r.offset(),
            )
        });
        let want = want.map(|(f, l, o)| (f.to_string(), l.to_string(), o));
        assert_eq!(got, want);
        if let Some(range) = Range::parse(cidr) {
            assert_eq!(range.cidr(), cidr);
        }
    }

    #[test]
    fn random_free_finds_the_only_hole() {
        let taken: HashSet<i64> = (0..100).filter(|v| *v != 42).collect();
        for _ in 0..20 {
            assert_eq!(random_free(0i64..=99, |v| taken.contains(&v)), Some(42));
        }
        assert_eq!(random_free(0i64..=0, |_| true), None);
    }

    #[test]
    fn node_ports_shared_by_port_number() {
        let used = HashSet::from([30100]);
        let mut op = PortOperation {
            used: &used,
            taken: Vec::new(),
            dry_run: false,
        };
        let mut svc = json!({"metadata": {"name": "dns"}, "spec": {"type": "NodePort", "ports": [
            {"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}, {"port": 80, "nodePort": 30100}]}});
        let err = init_node_ports(&mut svc, &mut op).expect_err("30100 is taken");
        assert_eq!(err.message, "Service \"dns\" is invalid: spec.ports[2].nodePort: Invalid value: 30100: provided port is already allocated");
        svc["spec"]["ports"][2]["nodePort"] = json!(30200);
        let mut op = PortOperation {
            used: &used,
            taken: Vec::new(),
            dry_run: false,
        };
        init_node_ports(&mut svc, &mut op).expect("allocates");
        let ports = node_ports_of(&svc);
        assert_eq!(ports[0], ports[1]);
        assert!(NODE_PORTS.contains(&ports[0]));
        assert_eq!(ports[2], 30200);
    }
}
