//! Cluster API's version check: what its admission webhooks accept in a `Machine`'s
//! `spec.version`, a `MachineDeployment`'s or `MachinePool`'s `spec.template.spec.version` and a
//! topology `Cluster`'s `spec.topology.version` (Cluster API v1.14.0
//! `core/webhooks/admission/machine.go:118-124`, `machinedeployment.go:229-235`,
//! `cluster.go:266-282`): a `v` and then what `github.com/blang/semver/v4`'s `Parse` reads, a
//! strict semantic version. `RKE2ControlPlane.spec.version` is copied into every Machine's.

#[cfg(test)]
mod go_differential;

/// Why Cluster API's webhooks refuse `version`, or `None` when they accept it.
///
/// ```text
/// v1.32.5+rke2r1          accepted
/// v1.34.2+rke2r1+rke2r1   refused: a build identifier holds a `+`
/// 1.32.5+rke2r1           refused: no `v`
/// ```
pub(crate) fn refusal(version: &str) -> Option<&'static str> {
    let Some(rest) = version.strip_prefix('v') else {
        return Some("it does not start with v");
    };
    parse(rest).err()
}

/// `semver.Parse` of blang/semver v4: `MAJOR.MINOR.PATCH`, then `-` and dot-separated
/// prerelease identifiers, then `+` and dot-separated build identifiers.
fn parse(s: &str) -> Result<(), &'static str> {
    if s.is_empty() {
        return Err("it is empty");
    }
    let mut parts = s.splitn(3, '.');
    let (Some(major), Some(minor), Some(rest)) = (parts.next(), parts.next(), parts.next()) else {
        return Err("it has no MAJOR.MINOR.PATCH");
    };
    number(major)?;
    number(minor)?;
    let (rest, build) = match rest.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (rest, None),
    };
    let (patch, prerelease) = match rest.split_once('-') {
        Some((patch, prerelease)) => (patch, Some(prerelease)),
        None => (rest, None),
    };
    number(patch)?;
    for identifier in prerelease.into_iter().flat_map(|p| p.split('.')) {
        if identifier.is_empty() {
            return Err("a prerelease identifier is empty");
        }
        if identifier.bytes().all(|b| b.is_ascii_digit()) {
            number(identifier)?;
        } else if !identifier.bytes().all(alphanumeric) {
            return Err("a prerelease identifier holds a character other than [0-9A-Za-z-]");
        }
    }
    for identifier in build.into_iter().flat_map(|b| b.split('.')) {
        if identifier.is_empty() {
            return Err("a build identifier is empty");
        }
        if !identifier.bytes().all(alphanumeric) {
            return Err("a build identifier holds a character other than [0-9A-Za-z-]");
        }
    }
    Ok(())
}

/// A number of the version: digits, no leading zero, at most `u64::MAX`.
fn number(s: &str) -> Result<(), &'static str> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err("a number holds a character other than a digit");
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err("a number has a leading zero");
    }
    s.parse::<u64>()
        .map(|_| ())
        .map_err(|_| "a number is too large")
}

fn alphanumeric(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}

#[cfg(test)]
mod tests {
    use super::refusal;

    #[test]
    fn rke2_versions_and_what_breaks_them() {
        for ok in ["v1.32.5+rke2r1", "v1.34.2", "v1.30.0-rc.1+rke2r2", "v0.0.0"] {
            assert_eq!(refusal(ok), None, "{ok}");
        }
        for bad in [
            "v1.34.2+rke2r1+rke2r1",
            "1.32.5+rke2r1",
            "v1.32",
            "v01.32.5",
            "v1.32.5+",
            "v1.32.5-",
            "v1.32.5-01",
            "v1.32.5+rke2r1.",
            "v",
            "v1.32.5+rke2_r1",
        ] {
            assert!(refusal(bad).is_some(), "{bad}");
        }
    }
}
