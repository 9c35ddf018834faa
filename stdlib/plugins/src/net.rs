//! IP address plugins (`prefixlength_to_netmask`, `prefixlen`, `network_address`, `netmask`,
//! `ipindex`, `add_to_ip`, `ip_address_from_interface`) and the parsing and printing of
//! addresses, interfaces and networks the way Python's `ipaddress` module does it: no leading
//! zeros in IPv4 octets, netmask and hostmask prefixes (`/255.255.255.0`), strict networks (no
//! host bits), IPv6 printed in the compressed form (`::ffff:102:304` for mapped addresses, as
//! Python before 3.13). Scoped IPv6 addresses (`fe80::1%eth0`) are not supported.

use std::net::Ipv6Addr;

use modelc_value::Value;

use super::bind::BoundArgs;
use super::error::PluginError;

type Result<T> = std::result::Result<T, PluginError>;

/// An IP address as an integer of its version's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ip {
    V4(u32),
    V6(u128),
}

impl Ip {
    fn max_prefix(self) -> u8 {
        match self {
            Ip::V4(_) => 32,
            Ip::V6(_) => 128,
        }
    }

    fn bits(self) -> u128 {
        match self {
            Ip::V4(a) => u128::from(a),
            Ip::V6(a) => a,
        }
    }

    fn with_bits(self, bits: u128) -> Ip {
        match self {
            Ip::V4(_) => Ip::V4(u32::try_from(bits).unwrap_or(u32::MAX)),
            Ip::V6(_) => Ip::V6(bits),
        }
    }

    /// The netmask of `prefix` bits (at most the version's width).
    fn mask(self, prefix: u8) -> u128 {
        let width = u32::from(self.max_prefix());
        let all = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
        let host_bits = width - u32::from(prefix).min(width);
        if host_bits == 128 { 0 } else { all & !((1u128 << host_bits) - 1) & all }
    }
}

impl std::fmt::Display for Ip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Ip::V4(a) => write!(f, "{}.{}.{}.{}", a >> 24, (a >> 16) & 0xff, (a >> 8) & 0xff, a & 0xff),
            Ip::V6(a) => f.write_str(&compress_v6(a)),
        }
    }
}

/// Python's compressed IPv6 text: hextets in lower-case hex without leading zeros, the
/// longest run of two or more zero hextets (the first of equal runs) as `::`.
fn compress_v6(a: u128) -> String {
    let hextets: Vec<u16> = (0..8).map(|i| ((a >> (112 - 16 * i)) & 0xffff) as u16).collect();
    let (mut best_start, mut best_len) = (0, 0);
    let mut i = 0;
    while i < 8 {
        if hextets[i] == 0 {
            let start = i;
            while i < 8 && hextets[i] == 0 {
                i += 1;
            }
            if i - start > best_len {
                (best_start, best_len) = (start, i - start);
            }
        } else {
            i += 1;
        }
    }
    let hex = |h: &[u16]| h.iter().map(|x| format!("{x:x}")).collect::<Vec<_>>().join(":");
    if best_len < 2 {
        return hex(&hextets);
    }
    format!("{}::{}", hex(&hextets[..best_start]), hex(&hextets[best_start + best_len..]))
}

/// An address with a prefix length: an interface or a network.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Prefixed {
    pub(crate) addr: Ip,
    pub(crate) prefix: u8,
}

impl Prefixed {
    fn network(self) -> Ip {
        self.addr.with_bits(self.addr.bits() & self.addr.mask(self.prefix))
    }

    fn broadcast(self) -> Ip {
        let width = u32::from(self.addr.max_prefix());
        let all = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
        self.addr.with_bits(self.network().bits() | (!self.addr.mask(self.prefix) & all))
    }
}

/// An IPv4 address in dotted decimal, as `ipaddress.IPv4Address` accepts it.
pub(crate) fn parse_v4(s: &str) -> Option<u32> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut out: u32 = 0;
    for p in parts {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) || (p.len() > 1 && p.starts_with('0'))
        {
            return None;
        }
        let octet: u32 = p.parse().ok()?;
        if octet > 255 {
            return None;
        }
        out = (out << 8) | octet;
    }
    Some(out)
}

/// An IPv6 address, as `ipaddress.IPv6Address` accepts it (without scope ids).
pub(crate) fn parse_v6(s: &str) -> Option<u128> {
    if !s.contains(':') {
        return None;
    }
    // An embedded IPv4 tail must follow Python's stricter octet rules.
    if let Some((_, tail)) = s.rsplit_once(':')
        && tail.contains('.')
        && parse_v4(tail).is_none()
    {
        return None;
    }
    s.parse::<Ipv6Addr>().ok().map(u128::from)
}

/// `ipaddress.ip_address`.
pub(crate) fn parse_ip(s: &str) -> Option<Ip> {
    parse_v4(s).map(Ip::V4).or_else(|| parse_v6(s).map(Ip::V6))
}

/// Which versions to try when parsing.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V4,
    V6,
    Any,
}

/// An interface (`strict == false`) or network (`strict == true`: no host bits) in the forms
/// `ipaddress` accepts: `addr`, `addr/len`, and for IPv4 `addr/netmask` or `addr/hostmask`.
pub(crate) fn parse_prefixed(s: &str, version: Version, strict: bool) -> Option<Prefixed> {
    let mut parts = s.split('/');
    let addr_text = parts.next()?;
    let prefix_text = parts.next();
    if parts.next().is_some() {
        return None;
    }
    let addr = match version {
        Version::V4 => Ip::V4(parse_v4(addr_text)?),
        Version::V6 => Ip::V6(parse_v6(addr_text)?),
        Version::Any => parse_ip(addr_text)?,
    };
    let prefix = match prefix_text {
        None => addr.max_prefix(),
        Some(p) => parse_prefix(addr, p)?,
    };
    let out = Prefixed { addr, prefix };
    if strict && out.network() != addr {
        return None;
    }
    Some(out)
}

fn parse_prefix(addr: Ip, p: &str) -> Option<u8> {
    if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
        let digits = p.trim_start_matches('0');
        let n: u32 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
        return if n <= u32::from(addr.max_prefix()) { u8::try_from(n).ok() } else { None };
    }
    let Ip::V4(_) = addr else { return None };
    let mask = parse_v4(p)?;
    // A netmask (ones then zeros) or a hostmask (zeros then ones).
    let ones = mask.leading_ones();
    if mask.checked_shl(ones).unwrap_or(0) == 0 {
        return u8::try_from(ones).ok();
    }
    let zeros = mask.leading_zeros();
    if (!mask).checked_shl(zeros).unwrap_or(0) == 0 {
        return u8::try_from(zeros).ok();
    }
    None
}

fn interface(args: &BoundArgs, name: &str) -> Result<Prefixed> {
    let s = args.str_arg(name)?;
    parse_prefixed(s, Version::Any, false).ok_or_else(|| {
        PluginError::external("ValueError", format!("'{s}' does not appear to be an IPv4 or IPv6 interface"))
    })
}

/// The IPv4 netmask of a prefix length: 24 → `255.255.255.0`.
pub(crate) fn prefixlength_to_netmask(args: &BoundArgs) -> Result<Value> {
    let n = args.int_arg("prefixlen")?;
    let prefix = u8::try_from(n)
        .ok()
        .filter(|&p| p <= 32)
        .ok_or_else(|| PluginError::external("NetmaskValueError", format!("'{n}' is not a valid netmask")))?;
    let ip = Ip::V4(0);
    Ok(Value::from(ip.with_bits(ip.mask(prefix)).to_string()))
}

pub(crate) fn prefixlen(args: &BoundArgs) -> Result<Value> {
    Ok(Value::Int(i64::from(interface(args, "addr")?.prefix)))
}

pub(crate) fn network_address(args: &BoundArgs) -> Result<Value> {
    Ok(Value::from(interface(args, "addr")?.network().to_string()))
}

pub(crate) fn netmask(args: &BoundArgs) -> Result<Value> {
    let i = interface(args, "addr")?;
    Ok(Value::from(i.addr.with_bits(i.addr.mask(i.prefix)).to_string()))
}

pub(crate) fn ip_address_from_interface(args: &BoundArgs) -> Result<Value> {
    Ok(Value::from(interface(args, "ip_interface")?.addr.to_string()))
}

/// The address at `position` in the network (negative from the end), optionally with the
/// network's prefix length.
pub(crate) fn ipindex(args: &BoundArgs) -> Result<Value> {
    let s = args.str_arg("addr")?;
    let position = args.int_arg("position")?;
    let keep_prefix = args.bool_arg("keep_prefix")?;
    let net = parse_prefixed(s, Version::Any, true).ok_or_else(|| {
        PluginError::external("ValueError", format!("'{s}' does not appear to be an IPv4 or IPv6 network"))
    })?;
    let (first, last) = (net.network().bits(), net.broadcast().bits());
    let out_of_range = || PluginError::external("IndexError", "address out of range");
    let bits = if position >= 0 {
        first.checked_add(u128::from(position.unsigned_abs())).filter(|&b| b <= last).ok_or_else(out_of_range)?
    } else {
        // -1 is the last address.
        let back = u128::from(position.unsigned_abs()) - 1;
        last.checked_sub(back).filter(|&b| b >= first).ok_or_else(out_of_range)?
    };
    let ip = net.addr.with_bits(bits);
    Ok(Value::from(if keep_prefix { format!("{ip}/{}", net.prefix) } else { ip.to_string() }))
}

/// The address `n` further on; leaving the version's range is Python's `AddressValueError`.
pub(crate) fn add_to_ip(args: &BoundArgs) -> Result<Value> {
    let s = args.str_arg("addr")?;
    let n = args.int_arg("n")?;
    let ip = parse_ip(s).ok_or_else(|| {
        PluginError::external("ValueError", format!("'{s}' does not appear to be an IPv4 or IPv6 address"))
    })?;
    let (version, limit) = match ip {
        Ip::V4(_) => (4, "2**32"),
        Ip::V6(_) => (6, "2**128"),
    };
    let width = u32::from(ip.max_prefix());
    let max = if width == 128 { u128::MAX } else { (1u128 << width) - 1 };
    let sum = if n >= 0 {
        ip.bits().checked_add(u128::from(n.unsigned_abs())).filter(|&b| b <= max)
    } else {
        ip.bits().checked_sub(u128::from(n.unsigned_abs()))
    };
    let Some(sum) = sum else {
        let target = i128::try_from(ip.bits()).ok().and_then(|b| b.checked_add(i128::from(n)));
        let shown = target.map(|t| t.to_string()).unwrap_or_else(|| "the result".into());
        let why = if n < 0 { "(< 0)".to_string() } else { format!("(>= {limit})") };
        return Err(PluginError::external(
            "AddressValueError",
            format!("{shown} {why} is not permitted as an IPv{version} address"),
        ));
    };
    Ok(Value::from(ip.with_bits(sum).to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(r: Result<Value>) -> String {
        match r {
            Ok(v) => {
                v.as_str().map(str::to_string).unwrap_or_else(|| modelc_value::interpolate(&v, &|_| String::new()))
            }
            Err(e) => format!("error: {e}"),
        }
    }

    fn one(name: &'static str, value: &str) -> BoundArgs {
        BoundArgs::new().with(name, value)
    }

    #[test]
    fn the_reference_examples() {
        assert_eq!(text(prefixlength_to_netmask(&BoundArgs::new().with("prefixlen", 24_i64))), "255.255.255.0");
        assert_eq!(text(prefixlen(&one("addr", "192.168.1.100/24"))), "24");
        assert_eq!(text(network_address(&one("addr", "192.168.1.100/24"))), "192.168.1.0");
        assert_eq!(text(netmask(&one("addr", "192.168.1.100/24"))), "255.255.255.0");
        let idx = |a: &str, p: i64, k: bool| {
            text(ipindex(&BoundArgs::new().with("addr", a).with("position", p).with("keep_prefix", k)))
        };
        assert_eq!(idx("192.168.1.0/24", 3, false), "192.168.1.3");
        assert_eq!(idx("192.168.1.0/24", 3, true), "192.168.1.3/24");
        let add = |a: &str, n: i64| text(add_to_ip(&BoundArgs::new().with("addr", a).with("n", n)));
        assert_eq!(add("10.0.0.1", 5), "10.0.0.6");
        assert_eq!(text(ip_address_from_interface(&one("ip_interface", "10.0.0.1/8"))), "10.0.0.1");
    }

    #[test]
    fn edges_and_errors_follow_ipaddress() {
        let idx = |a: &str, p: i64| {
            text(ipindex(&BoundArgs::new().with("addr", a).with("position", p).with("keep_prefix", false)))
        };
        assert_eq!(idx("192.168.1.0/24", -1), "192.168.1.255");
        assert_eq!(idx("192.168.1.0/24", 256), "error: IndexError: address out of range");
        assert_eq!(idx("192.168.1.0/24", -257), "error: IndexError: address out of range");
        assert_eq!(
            idx("192.168.1.1/24", 0),
            "error: ValueError: '192.168.1.1/24' does not appear to be an IPv4 or IPv6 network"
        );
        assert_eq!(idx("2001:db8::/64", 1), "2001:db8::1");
        let add = |a: &str, n: i64| text(add_to_ip(&BoundArgs::new().with("addr", a).with("n", n)));
        assert_eq!(
            add("255.255.255.255", 1),
            "error: AddressValueError: 4294967296 (>= 2**32) is not permitted as an IPv4 address"
        );
        assert_eq!(add("0.0.0.0", -1), "error: AddressValueError: -1 (< 0) is not permitted as an IPv4 address");
        assert_eq!(add("::1", 0xfffe), "::ffff");
        assert!(add("1.2.3.4", i64::MIN).starts_with("error: AddressValueError: -9223372036837866748 (< 0)"));
        assert_eq!(
            text(prefixlength_to_netmask(&BoundArgs::new().with("prefixlen", 33_i64))),
            "error: NetmaskValueError: '33' is not a valid netmask"
        );
        assert_eq!(text(prefixlength_to_netmask(&BoundArgs::new().with("prefixlen", 0_i64))), "0.0.0.0");
        assert_eq!(text(netmask(&one("addr", "2001:db8::1/64"))), "ffff:ffff:ffff:ffff::");
        assert_eq!(text(prefixlen(&one("addr", "10.0.0.1"))), "32");
        assert_eq!(text(prefixlen(&one("addr", "10.0.0.1/255.255.0.0"))), "16");
        assert_eq!(text(prefixlen(&one("addr", "10.0.0.1/0.0.0.255"))), "24");
        assert_eq!(
            text(prefixlen(&one("addr", "x"))),
            "error: ValueError: 'x' does not appear to be an IPv4 or IPv6 interface"
        );
    }

    #[test]
    fn parsing_is_as_strict_as_python() {
        assert_eq!(parse_v4("1.2.3.4"), Some(0x01020304));
        for bad in ["01.2.3.4", "1.2.3", "1.2.3.256", "1.2.3.4.5", "1.2.3.+4", "", "1..3.4", " 1.2.3.4"] {
            assert_eq!(parse_v4(bad), None, "{bad}");
        }
        assert!(parse_v6("::ffff:1.2.3.4").is_some());
        assert!(parse_v6("::ffff:01.2.3.4").is_none());
        assert!(parse_v6("1.2.3.4").is_none());
        assert!(parse_prefixed("10.0.0.0/8", Version::V4, true).is_some());
        assert!(parse_prefixed("10.0.0.1/8", Version::V4, true).is_none());
        assert!(parse_prefixed("10.0.0.1/33", Version::V4, false).is_none());
        assert!(parse_prefixed("10.0.0.1/8/8", Version::Any, false).is_none());
        assert!(parse_prefixed("10.0.0.1/255.0.255.0", Version::V4, false).is_none());
        assert!(parse_prefixed("::1/129", Version::V6, false).is_none());
    }

    #[test]
    fn ipv6_text_is_pythons() {
        assert_eq!(compress_v6(0), "::");
        assert_eq!(compress_v6(1), "::1");
        assert_eq!(compress_v6(parse_v6("::ffff:1.2.3.4").unwrap_or(0)), "::ffff:102:304");
        assert_eq!(compress_v6(parse_v6("2001:db8:0:0:1:0:0:1").unwrap_or(0)), "2001:db8::1:0:0:1");
        assert_eq!(compress_v6(parse_v6("1:0:2:3:4:5:6:7").unwrap_or(0)), "1:0:2:3:4:5:6:7");
        assert_eq!(compress_v6(parse_v6("fe80::").unwrap_or(0)), "fe80::");
    }
}
