//! The string formats checked (`date-time`, `date`, `byte`, `ipv4`, `ipv6`, `cidr`, `uuid`).

/// Whether a string is in a format (formats not listed here are not checked).
pub(super) fn format_ok(format: &str, s: &str) -> bool {
    match format {
        "date-time" | "datetime" => is_date_time(s),
        "date" => is_date(s.as_bytes()),
        "byte" => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok(),
        "ipv6" => s.contains(':') && s.parse::<std::net::IpAddr>().is_ok(),
        "cidr" => is_cidr(s),
        "uuid" => is_uuid(s),
        _ => true,
    }
}

/// `YYYY-MM-DD` with a plausible month and day.
fn is_date(b: &[u8]) -> bool {
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    if b.len() != 10
        || !digits(0..4)
        || b[4] != b'-'
        || !digits(5..7)
        || b[7] != b'-'
        || !digits(8..10)
    {
        return false;
    }
    let two = |i: usize| u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0');
    (1..=12).contains(&two(5)) && (1..=31).contains(&two(8))
}

/// RFC 3339 `date-time`: `YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`.
fn is_date_time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 20 || !is_date(&b[..10]) || !matches!(b[10], b'T' | b't' | b' ') {
        return false;
    }
    let digit2 = |i: usize, max: u32| {
        b.get(i..i + 2)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
            && u32::from(b[i] - b'0') * 10 + u32::from(b[i + 1] - b'0') <= max
    };
    if !digit2(11, 23) || b[13] != b':' || !digit2(14, 59) || b[16] != b':' || !digit2(17, 60) {
        return false;
    }
    let mut i = 19;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len() && digit2(i + 1, 23) && b[i + 3] == b':' && digit2(i + 4, 59)
        }
        _ => false,
    }
}

/// `address/prefix` with the prefix within the address's bits.
fn is_cidr(s: &str) -> bool {
    let Some((address, prefix)) = s.split_once('/') else {
        return false;
    };
    let Ok(prefix) = prefix.parse::<u8>() else {
        return false;
    };
    match address.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(_)) => prefix <= 32,
        Ok(std::net::IpAddr::V6(_)) => prefix <= 128,
        Err(_) => false,
    }
}

/// `8-4-4-4-12` hexadecimal digits.
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|c| c.is_ascii_hexdigit()))
}
