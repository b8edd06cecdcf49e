//! Identical payloads are read once.
//!
//! A management cluster's bootstrap Secrets repeat themselves: CAPRKE2 renders a Machine's user
//! data from its `RKE2Config`, and every replica of a MachineDeployment (or every joining
//! control-plane Machine of one cluster) gets the same template, so their `data.value` bytes are
//! identical; only the Secret's name differs. [`Memo`] keeps what was made of a payload, keyed by
//! the stored `format` and `value` keys, so that the next Secret with the same bytes costs a hash
//! and a comparison instead of a decode, an inflate and a parse.
//!
//! What a memo holds must depend on those bytes alone (and on options fixed for the memo's
//! life): the per-Secret parts (name, namespace, cluster label) are put back by the caller. The
//! entry points of the reports (`Inspector`, `Sizer`, `Linter`) are built on it.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use crate::envelope::BootstrapSecret;

/// How many distinct payloads a memo keeps before it starts again. A kubectl dump lists the
/// replicas of one MachineDeployment next to each other (names sort together), so a small window
/// catches them; the bound keeps memory flat on a dump where nothing repeats.
pub(crate) const CAPACITY: usize = 256;

/// How many bytes of stored payloads (the keys) a memo holds at most before it starts again.
pub(crate) const CAPACITY_BYTES: usize = 32 << 20;

/// A payload larger than this is made each time, never kept.
const LARGEST_KEPT: usize = CAPACITY_BYTES / 8;

/// What was made of each distinct payload, shared by the threads of one run.
///
/// The key is the payload as stored (each of `format` and `value`: how it is stored, its
/// length, its bytes): a fast hash finds the candidates and a byte-for-byte comparison decides,
/// so two Secrets share an entry only when their stored payloads are equal.
///
/// Its `Debug` output shows how many payloads it keeps, never what it keeps (a report made with
/// secrets shown holds them).
pub(crate) struct Memo<T> {
    kept: Mutex<Kept<T>>,
    hasher: foldhash::quality::RandomState,
    capacity: usize,
}

struct Kept<T> {
    by_hash: HashMap<u64, Vec<Entry<T>>>,
    entries: usize,
    bytes: usize,
}

struct Entry<T> {
    stored: Box<[u8]>,
    made: Arc<T>,
}

impl<T> Kept<T> {
    fn find(&self, hash: u64, stored: &(impl Stored + ?Sized)) -> Option<&Arc<T>> {
        let bucket = self.by_hash.get(&hash)?;
        bucket
            .iter()
            .find(|e| same(stored, &e.stored))
            .map(|e| &e.made)
    }
}

impl<T> std::fmt::Debug for Memo<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kept = self.lock();
        f.debug_struct("Memo")
            .field("kept", &kept.entries)
            .field("bytes", &kept.bytes)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl<T> Default for Memo<T> {
    fn default() -> Self {
        Memo::with_capacity(CAPACITY)
    }
}

impl<T> Memo<T> {
    /// A memo that keeps the last [`CAPACITY`] distinct payloads (and at most
    /// [`CAPACITY_BYTES`] of them).
    /// A memo that keeps at most `capacity` distinct payloads (0 keeps none), and at most
    /// [`CAPACITY_BYTES`] of them. When full, it forgets them all and starts again.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Memo {
            kept: Mutex::new(Kept {
                by_hash: HashMap::new(),
                entries: 0,
                bytes: 0,
            }),
            hasher: foldhash::quality::RandomState::default(),
            capacity,
        }
    }

    /// What was made of a Secret with the same stored `format` and `value` as `secret`, or
    /// `make()`'s result, kept when it is `Ok` (errors are not kept). `make` must depend only on
    /// the payload, not on the Secret's name or labels. The lock is not held while `make` runs:
    /// two threads may both make the same entry, and one is kept.
    ///
    /// # Errors
    /// `make`'s error.
    pub(crate) fn get_or_try_insert<E>(
        &self,
        secret: &BootstrapSecret<'_>,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        self.by_key(secret, make)
    }

    fn by_key<E>(
        &self,
        stored: &(impl Stored + ?Sized),
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E> {
        if self.capacity == 0 {
            return make().map(Arc::new);
        }
        let hash = {
            let mut hasher = self.hasher.build_hasher();
            stored.feed(&mut |part| hasher.write(part));
            hasher.finish()
        };
        if let Some(hit) = self.lock().find(hash, stored) {
            return Ok(Arc::clone(hit));
        }
        let made = Arc::new(make()?);
        let mut key = Vec::new();
        stored.feed(&mut |part| key.extend_from_slice(part));
        if key.len() > LARGEST_KEPT {
            return Ok(made);
        }
        let mut kept = self.lock();
        if let Some(other) = kept.find(hash, stored) {
            // Another thread made it meanwhile.
            return Ok(Arc::clone(other));
        }
        if kept.entries >= self.capacity || kept.bytes + key.len() > CAPACITY_BYTES {
            kept.by_hash.clear();
            (kept.entries, kept.bytes) = (0, 0);
        }
        kept.entries += 1;
        kept.bytes += key.len();
        kept.by_hash.entry(hash).or_default().push(Entry {
            stored: key.into_boxed_slice(),
            made: Arc::clone(&made),
        });
        Ok(made)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept<T>> {
        // A panic elsewhere cannot leave the map half-written: insert and clear are whole.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A payload as stored, fed in parts: for a Secret, each of its `format` and `value` keys with
/// how it is stored (base64 under `data`, text under `stringData`, or bare user data) and its
/// length, so that the parts of two payloads line up only when the payloads are equal.
trait Stored {
    fn feed(&self, feed: &mut dyn FnMut(&[u8]));
}

impl Stored for BootstrapSecret<'_> {
    fn feed(&self, feed: &mut dyn FnMut(&[u8])) {
        self.feed_stored(feed);
    }
}

/// Plain bytes, for the tests.
#[cfg(test)]
impl Stored for [u8] {
    fn feed(&self, feed: &mut dyn FnMut(&[u8])) {
        feed(self);
    }
}

/// Whether `stored` feeds exactly the bytes `key` holds.
fn same(stored: &(impl Stored + ?Sized), key: &[u8]) -> bool {
    let mut rest = Some(key);
    stored.feed(&mut |part| {
        rest = rest.and_then(|r| r.strip_prefix(part));
    });
    rest.is_some_and(<[u8]>::is_empty)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn makes_each_key_once_and_starts_again_when_full() {
        let memo = Memo::with_capacity(2);
        let made = Cell::new(0);
        let make = |v: u32| {
            made.set(made.get() + 1);
            Ok::<_, ()>(v)
        };
        assert_eq!(*memo.by_key(&[1u8; 32][..], || make(1)).unwrap(), 1);
        assert_eq!(*memo.by_key(&[1u8; 32][..], || make(9)).unwrap(), 1);
        assert_eq!(*memo.by_key(&[2u8; 32][..], || make(2)).unwrap(), 2);
        assert_eq!(made.get(), 2);
        // Full: the third key clears the map, so key 1 is made again.
        assert_eq!(*memo.by_key(&[3u8; 32][..], || make(3)).unwrap(), 3);
        assert_eq!(*memo.by_key(&[1u8; 32][..], || make(1)).unwrap(), 1);
        assert_eq!(made.get(), 4);
    }

    #[test]
    fn errors_are_not_kept() {
        let memo: Memo<u32> = Memo::default();
        assert_eq!(memo.by_key(&[7u8; 32][..], || Err("bad")), Err("bad"));
        assert_eq!(*memo.by_key(&[7u8; 32][..], || Ok::<_, ()>(5)).unwrap(), 5);
    }

    #[test]
    fn debug_shows_counts_not_contents() {
        let memo = Memo::with_capacity(4);
        memo.by_key(&[1u8; 32][..], || Ok::<_, ()>("token-value".to_owned()))
            .unwrap();
        let shown = format!("{memo:?}");
        assert_eq!(shown, "Memo { kept: 1, bytes: 32, capacity: 4 }");
    }

    #[test]
    fn a_key_is_equal_bytes_not_a_prefix_or_an_extension() {
        assert!(same(&b"abc"[..], b"abc"));
        assert!(!same(&b"ab"[..], b"abc"));
        assert!(!same(&b"abcd"[..], b"abc"));
        assert!(!same(&b"abd"[..], b"abc"));
        let memo = Memo::default();
        assert_eq!(*memo.by_key(&b"abc"[..], || Ok::<_, ()>(1)).unwrap(), 1);
        assert_eq!(*memo.by_key(&b"ab"[..], || Ok::<_, ()>(2)).unwrap(), 2);
        assert_eq!(*memo.by_key(&b"abc"[..], || Ok::<_, ()>(3)).unwrap(), 1);
    }

    #[test]
    fn memory_is_bounded_in_bytes_too() {
        let memo = Memo::with_capacity(1000);
        let made = Cell::new(0);
        let make = || {
            made.set(made.get() + 1);
            Ok::<_, ()>(())
        };
        // Too large to keep: made each time.
        let huge = vec![7u8; LARGEST_KEPT + 1];
        memo.by_key(&huge[..], make).unwrap();
        memo.by_key(&huge[..], make).unwrap();
        assert_eq!(made.get(), 2);
        // Eight of the largest kept fill it; the ninth starts it again.
        let keys: Vec<Vec<u8>> = (0..9u8).map(|i| vec![i; LARGEST_KEPT]).collect();
        for key in &keys {
            memo.by_key(&key[..], make).unwrap();
        }
        assert!(memo.lock().bytes <= CAPACITY_BYTES);
        assert_eq!(memo.lock().entries, 1);
        memo.by_key(&keys[8][..], make).unwrap();
        assert_eq!(made.get(), 2 + 9);
        memo.by_key(&keys[0][..], make).unwrap();
        assert_eq!(made.get(), 2 + 10);
    }

    #[test]
    fn capacity_zero_keeps_nothing() {
        let memo = Memo::with_capacity(0);
        let made = Cell::new(0);
        for _ in 0..3 {
            memo.by_key(&[0u8; 32][..], || {
                made.set(made.get() + 1);
                Ok::<_, ()>(())
            })
            .unwrap();
        }
        assert_eq!(made.get(), 3);
    }

    #[test]
    fn the_key_covers_how_and_what_is_stored() {
        let options = crate::options::DecodeOptions::default();
        let doc = |name: &str, format: &str, value: &str| {
            format!(
                "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata: {{name: {name}}}\ndata:\n  format: {format}\n  value: {value}\n"
            )
        };
        let key = |secret: &BootstrapSecret<'_>| {
            let mut bytes = Vec::new();
            secret.feed_stored(&mut |part| bytes.extend_from_slice(part));
            bytes
        };
        let keys: Vec<Vec<u8>> = [
            doc("a", "Y2xvdWQtY29uZmln", "I2Nsb3VkLWNvbmZpZwo="),
            doc("b", "Y2xvdWQtY29uZmln", "I2Nsb3VkLWNvbmZpZwo="), // another name: same key
            doc("a", "aWduaXRpb24=", "I2Nsb3VkLWNvbmZpZwo="),     // another format
            doc("a", "Y2xvdWQtY29uZmln", "I2Nsb3VkLWNvbmZpZyAK"), // another value
        ]
        .iter()
        .map(|text| {
            let envelope = crate::envelope::Envelope::parse(text.as_bytes(), &options).unwrap();
            key(&envelope.secrets[0])
        })
        .collect();
        assert_eq!(keys[0], keys[1]);
        assert_ne!(keys[0], keys[2]);
        assert_ne!(keys[0], keys[3]);
        assert_ne!(keys[2], keys[3]);
        // The same bytes as `stringData` text are another key: the base64 text differs in form.
        let plain = "apiVersion: v1\nkind: Secret\ntype: cluster.x-k8s.io/secret\nmetadata: {name: a}\nstringData:\n  format: cloud-config\n  value: \"#cloud-config\\n\"\n";
        let envelope = crate::envelope::Envelope::parse(plain.as_bytes(), &options).unwrap();
        assert_ne!(key(&envelope.secrets[0]), keys[0]);
    }
}
