//! The stand-in for CAPRKE2's CIS node preparation script (`/opt/rke2-cis-script.sh`).
//!
//! CAPRKE2 writes its own script (1,131 bytes in v0.25, with tabs); a preview writes this one,
//! which takes the same steps and has the same length, so the payload's size is the real one.

/// The script.
pub(crate) const SCRIPT: &str = "#!/bin/bash\n\
# CIS node preparation (stand-in written by rke2-payload for previews: CAPRKE2 writes its own\n\
# script here; this one does the same steps and has the same size, so sizes are real).\n\
set -e\n\
\n\
if id etcd >/dev/null 2>&1; then\n\
\techo 'etcd user is present'\n\
else\n\
\tuseradd -r -c \"etcd user\" -s /sbin/nologin -M etcd -U\n\
fi\n\
\n\
found=false\n\
for conf in /usr/share/rke2/rke2-cis-sysctl.conf \\\n\
\t/usr/local/share/rke2/rke2-cis-sysctl.conf \\\n\
\t/opt/rke2/share/rke2/rke2-cis-sysctl.conf; do\n\
\tif [ -f \"$conf\" ]; then\n\
\t\tfound=true\n\
\t\tcp -f \"$conf\" /etc/sysctl.d/90-rke2-cis.conf\n\
\tfi\n\
done\n\
\n\
if [ \"$found\" = false ]; then\n\
\techo 'no RKE2 CIS kernel parameters file was found'\n\
\texit 1\n\
fi\n\
\n\
sysctl -p /etc/sysctl.d/90-rke2-cis.conf\n\
#--------------------------------------------------------------------\n\
#--------------------------------------------------------------------\n\
#--------------------------------------------------------------------\n\
#--------------------------------------------------------------------\n\
#--------------------------------------------------------------------\n\
#-----------------------------------------------------------------\n\
";

#[cfg(test)]
mod tests {
    #[test]
    fn same_size_as_caprke2_s() {
        assert_eq!(super::SCRIPT.len(), 1131);
    }
}
