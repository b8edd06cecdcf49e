//! Streaming on several cores: the calling thread only splits the input into objects (no
//! parsing) and packs them into batches; a pool of threads parses each object and runs the work
//! on its Secrets, borrowing from the batch; the results come back to the caller in input order.
//!
//! Memory stays bounded: a few batches per thread are in flight, and their buffers are reused.
//! Batches keep the cost of handing work between threads small next to the work itself.

use std::collections::BTreeMap;
use std::io::Read;
use std::ops::Range;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

use crate::envelope::BootstrapSecret;
use crate::envelope::StreamSummary;
use crate::envelope::stream::{
    Chunk, Counts, Layout, Tally, each_secret, parse_chunk, split, whole,
};
use crate::error::Error;
use crate::options::DecodeOptions;

/// A batch is handed to the pool when it holds this many objects…
const BATCH_OBJECTS: usize = 32;
/// …or this many bytes of text.
const BATCH_BYTES: usize = 1 << 20;

/// Calls `work` on every bootstrap Secret of `reader` using `threads` worker threads, and
/// `sink` with each result in input order. With `threads` ≤ 1 everything runs on the calling
/// thread.
///
/// `sink` may stop the stream by returning an error. Errors come in input order too: the
/// results of every Secret before the point of failure reach `sink` first.
pub(crate) fn map_secrets<R, T, W, S, E>(
    reader: R,
    options: &DecodeOptions,
    threads: usize,
    work: W,
    sink: S,
) -> Result<StreamSummary, E>
where
    R: Read,
    T: Send,
    W: Fn(&BootstrapSecret<'_>) -> T + Sync,
    S: FnMut(T) -> Result<(), E>,
    E: From<Error>,
{
    let mut sink = sink;
    if threads <= 1 {
        return each_secret(reader, options, |secret| sink(work(secret)));
    }
    std::thread::scope(|scope| {
        let mut pipe = Pipeline {
            options,
            work: &work,
            sink: &mut sink,
            scope,
            pool: None,
            threads,
            batch: Batch::default(),
            sent: 0,
            delivered: 0,
            pending: BTreeMap::new(),
            spare: Vec::new(),
            tally: Tally::default(),
            stopped: false,
            error: std::marker::PhantomData,
        };
        let layout = split(reader, options.max_object, |chunk| pipe.push(chunk));
        match layout {
            Err(e) if pipe.stopped => Err(e),
            Err(e) => {
                // Everything split before the failure is delivered first.
                pipe.finish()?;
                Err(e)
            }
            Ok(Layout::Chunked(syntax)) => {
                pipe.finish()?;
                Ok(pipe.tally.finish(syntax)?)
            }
            Ok(Layout::Whole(all)) => {
                let Pipeline { sink, work, .. } = pipe;
                whole(&all, options, |secret| sink(work(secret)))
            }
        }
    })
}

/// The worker threads, started when the first batch is full: an input smaller than one batch is
/// done on the calling thread, without paying for threads.
struct Pool<T> {
    jobs: SyncSender<Batch>,
    done: Receiver<Returned<T>>,
    /// Batches in flight at most.
    capacity: u64,
}

impl<T: Send> Pool<T> {
    fn start<'scope, W>(
        scope: &'scope std::thread::Scope<'scope, '_>,
        threads: usize,
        options: &'scope DecodeOptions,
        work: &'scope W,
    ) -> Result<Self, Error>
    where
        W: Fn(&BootstrapSecret<'_>) -> T + Sync,
        T: 'scope,
    {
        let capacity = threads * 2;
        let mut started = 0;
        let (jobs, job_rx) = sync_channel::<Batch>(capacity);
        let (done_tx, done) = sync_channel::<Returned<T>>(capacity);
        let job_rx = Arc::new(Mutex::new(job_rx));
        for _ in 0..threads {
            let job_rx = Arc::clone(&job_rx);
            let done_tx = done_tx.clone();
            // A thread the system will not give is one fewer worker, not a panic.
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(batch) = job else { return };
                    // A panic (a bug) is handed to the calling thread, which re-raises it, instead
                    // of leaving it waiting for a batch that never comes back.
                    let results = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        (0..batch.chunks.len())
                            .map(|i| run(batch.chunk(i), options, batch.first + i, work))
                            .collect::<Vec<_>>()
                    }));
                    let message = results.map(|results| (batch, results));
                    let panicked = message.is_err();
                    if done_tx.send(message).is_err() || panicked {
                        return;
                    }
                }
            });
            match spawned {
                Ok(_) => started += 1,
                Err(_) => break,
            }
        }
        if started == 0 {
            return Err(Error::WorkersStopped);
        }
        Ok(Pool {
            jobs,
            done,
            capacity: capacity as u64,
        })
    }
}

/// A batch back from the pool with its results, or the panic that stopped a worker.
type Returned<T> = Result<(Batch, Vec<Done<T>>), Box<dyn std::any::Any + Send>>;

/// What the pool made of one chunk: a result per bootstrap Secret, and the chunk's counts.
type Done<T> = Result<(Vec<T>, Counts), Error>;

fn run<T>(
    chunk: Chunk<'_>,
    options: &DecodeOptions,
    index: usize,
    work: &impl Fn(&BootstrapSecret<'_>) -> T,
) -> Done<T> {
    let (secrets, counts) = parse_chunk(chunk, options, index);
    Ok((secrets.iter().map(work).collect(), counts))
}

/// Consecutive chunks of the input, copied into one buffer.
#[derive(Default)]
struct Batch {
    /// Its place in the order of batches.
    seq: u64,
    /// The ordinal of its first chunk in the input.
    first: usize,
    text: Vec<u8>,
    /// Each chunk (its text left out) and where its text is in `text`.
    chunks: Vec<(Chunk<'static>, Range<usize>)>,
}

impl Batch {
    fn chunk(&self, i: usize) -> Chunk<'_> {
        let (chunk, range) = &self.chunks[i];
        Chunk {
            text: &self.text[range.clone()],
            ..*chunk
        }
    }

    fn push(&mut self, chunk: Chunk<'_>) {
        let start = self.text.len();
        self.text.extend_from_slice(chunk.text);
        let range = start..self.text.len();
        self.chunks.push((Chunk { text: &[], ..chunk }, range));
    }

    fn full(&self) -> bool {
        self.chunks.len() >= BATCH_OBJECTS || self.text.len() >= BATCH_BYTES
    }
}

/// The calling thread's side: batches out, results back in order.
struct Pipeline<'p, 'scope, 'env, T, W, S, E> {
    options: &'scope DecodeOptions,
    work: &'scope W,
    sink: &'p mut S,
    scope: &'scope std::thread::Scope<'scope, 'env>,
    pool: Option<Pool<T>>,
    threads: usize,
    /// The batch being filled.
    batch: Batch,
    /// Batches handed to the pool, and delivered to the sink.
    sent: u64,
    delivered: u64,
    /// Results that came back before their turn.
    pending: BTreeMap<u64, (Batch, Vec<Done<T>>)>,
    /// Delivered batches, for their buffers.
    spare: Vec<Batch>,
    tally: Tally,
    /// Delivery failed: nothing more is to be done.
    stopped: bool,
    error: std::marker::PhantomData<fn() -> E>,
}

impl<'scope, T, W, S, E> Pipeline<'_, 'scope, '_, T, W, S, E>
where
    T: Send + 'scope,
    W: Fn(&BootstrapSecret<'_>) -> T + Sync,
    S: FnMut(T) -> Result<(), E>,
    E: From<Error>,
{
    fn push(&mut self, chunk: Chunk<'_>) -> Result<(), E> {
        self.batch.push(chunk);
        if self.batch.full() {
            self.send()?;
        }
        Ok(())
    }

    /// Hands the batch being filled to the pool (starting it the first time), first delivering
    /// what is ready (and waiting while the pool is full).
    fn send(&mut self) -> Result<(), E> {
        if self.pool.is_none() {
            self.pool = Some(Pool::start(
                self.scope,
                self.threads,
                self.options,
                self.work,
            )?);
        }
        let capacity = self.pool.as_ref().map_or(1, |p| p.capacity);
        while self.sent - self.delivered >= capacity {
            if !self.receive(true)? {
                break;
            }
        }
        while self.receive(false)? {}
        let mut next = self.spare.pop().unwrap_or_default();
        next.text.clear();
        next.chunks.clear();
        next.seq = self.sent + 1;
        next.first = self.batch.first + self.batch.chunks.len();
        let batch = std::mem::replace(&mut self.batch, next);
        self.sent += 1;
        let pool = self.pool.as_ref().ok_or(Error::WorkersStopped)?;
        if pool.jobs.send(batch).is_ok() {
            return Ok(());
        }
        // The workers only go away when one panicked: hand its panic on, as `receive` does.
        while let Ok(returned) = pool.done.recv() {
            if let Err(panic) = returned {
                std::panic::resume_unwind(panic);
            }
        }
        Err(Error::WorkersStopped.into())
    }

    /// Takes one result from the pool (waiting for it or not) and delivers what is in turn.
    /// `false` when there was nothing to take.
    fn receive(&mut self, wait: bool) -> Result<bool, E> {
        let Some(pool) = &self.pool else {
            return Ok(false);
        };
        let got = if wait {
            pool.done.recv().ok()
        } else {
            pool.done.try_recv().ok()
        };
        let (batch, results) = match got {
            None => return Ok(false),
            Some(Ok(returned)) => returned,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
        };
        self.pending.insert(batch.seq, (batch, results));
        while let Some((batch, results)) = self.pending.remove(&self.delivered) {
            self.delivered += 1;
            let delivered = self.deliver(&batch, results);
            self.spare.push(batch);
            if let Err(e) = delivered {
                self.stopped = true;
                return Err(e);
            }
        }
        Ok(true)
    }

    fn deliver(&mut self, batch: &Batch, results: Vec<Done<T>>) -> Result<(), E> {
        for (i, done) in results.into_iter().enumerate() {
            // The pool assumed one object per chunk; a chunk holding a nested `List` (or none)
            // moves the indexes of those after it, so they are done again here with the right one.
            let done = if self.tally.index == batch.first + i {
                done
            } else {
                run(batch.chunk(i), self.options, self.tally.index, self.work)
            };
            let (outputs, counts) = done?;
            self.tally.add(counts, outputs.len());
            for output in outputs {
                (self.sink)(output)?;
            }
        }
        Ok(())
    }

    /// Hands over the last batch and delivers everything still in flight. Without a pool (the
    /// input was smaller than a batch) the batch is done here.
    fn finish(&mut self) -> Result<(), E> {
        if self.pool.is_none() {
            let batch = std::mem::take(&mut self.batch);
            let results = (0..batch.chunks.len())
                .map(|i| run(batch.chunk(i), self.options, batch.first + i, self.work))
                .collect();
            return self.deliver(&batch, results);
        }
        if !self.batch.chunks.is_empty() {
            self.send()?;
        }
        while self.delivered < self.sent {
            if !self.receive(true)? {
                break;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StreamError;

    fn list(n: usize) -> String {
        let mut list = String::from("{\"kind\":\"List\",\"items\":[");
        for i in 0..n {
            if i > 0 {
                list.push(',');
            }
            list.push_str(&format!(
                "{{\"kind\":\"Secret\",\"metadata\":{{\"name\":\"s{i}\"}},\"stringData\":{{\"format\":\"cloud-config\",\"value\":\"#cloud-config\\nruncmd: []\\n\"}}}}"
            ));
        }
        list.push_str("]}");
        list
    }

    /// What `map` makes of each Secret of `input`, in the order delivered, and how it ended.
    fn collect(
        input: &str,
        threads: usize,
        map: fn(&BootstrapSecret<'_>) -> String,
    ) -> (Result<StreamSummary, Error>, Vec<String>) {
        let mut seen = Vec::new();
        let result = map_secrets::<_, _, _, _, Error>(
            input.as_bytes(),
            &DecodeOptions::default(),
            threads,
            map,
            |x| {
                seen.push(x);
                Ok(())
            },
        );
        (result, seen)
    }

    #[test]
    fn results_come_back_in_order_and_complete() {
        // 5 is less than a batch (done on the calling thread), 500 is many.
        for (n, threads) in [5, 500]
            .into_iter()
            .flat_map(|n| [0, 1, 2, 4].map(|t| (n, t)))
        {
            let (summary, names) =
                collect(&list(n), threads, |s| s.name().unwrap_or("").to_owned());
            assert_eq!(summary.unwrap().secrets, n);
            let want: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            assert_eq!(names, want, "{n} Secrets, {threads} threads");
        }
    }

    #[test]
    fn a_sink_error_stops_everything() {
        let list = list(300);
        let mut seen = 0;
        let result = map_secrets(
            list.as_bytes(),
            &DecodeOptions::default(),
            2,
            |_| (),
            |()| {
                seen += 1;
                if seen == 40 {
                    Err(StreamError::Sink("stop"))
                } else {
                    Ok(())
                }
            },
        );
        assert!(matches!(result, Err(StreamError::Sink("stop"))));
        assert_eq!(seen, 40, "nothing is delivered after the error");
    }

    #[test]
    fn a_broken_item_is_handed_over_as_broken_and_the_rest_follow() {
        let good = list(100);
        // Item 70 is not valid JSON inside: the splitter accepts it, the parser does not.
        let broken = good.replacen(
            "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"s70\"}",
            "{\"kind\":\"Secret\",\"metadata\":{\"name\":1e999999999999999999}",
            1,
        );
        assert_ne!(good, broken);
        for threads in [1, 2] {
            let (result, names) = collect(&broken, threads, |s| {
                let broken = s.is_broken() && s.value().is_err();
                format!(
                    "{}{}",
                    s.name().unwrap_or(""),
                    if broken { "!" } else { "" }
                )
            });
            assert!(result.is_ok(), "{threads} threads");
            assert_eq!(names.len(), 100, "{threads} threads");
            assert_eq!(names[70], "!", "{threads} threads");
            assert_eq!(names[71], "s71", "{threads} threads");
            assert_eq!(names.iter().filter(|n| n.ends_with('!')).count(), 1);
        }
    }

    #[test]
    fn nested_lists_keep_the_object_indexes_of_the_sequential_path() {
        // Unnamed Secrets are known by their index; a nested List shifts the ones after it.
        let secret = "{\"kind\":\"Secret\",\"stringData\":{\"format\":\"cloud-config\",\"value\":\"#cloud-config\\n\"}}";
        let nested = format!("{{\"kind\":\"List\",\"items\":[{secret},{secret},{secret}]}}");
        let mut items = vec![secret.to_owned(); 80];
        items[10] = nested;
        items[50] = "{\"kind\":\"ConfigMap\"}".to_owned();
        let input = format!("{{\"kind\":\"List\",\"items\":[{}]}}", items.join(","));
        let ids = |threads| {
            let (summary, ids) = collect(&input, threads, |s| s.id().to_string());
            (ids, summary.unwrap())
        };
        let (sequential, summary) = ids(1);
        assert_eq!(sequential.len(), 81);
        assert_eq!(summary.skipped_objects, 1);
        assert_eq!(ids(2), (sequential, summary));
    }

    #[test]
    fn a_panic_in_the_work_reaches_the_caller_instead_of_hanging() {
        let list = list(300);
        let result = std::panic::catch_unwind(|| {
            map_secrets(
                list.as_bytes(),
                &DecodeOptions::default(),
                2,
                |s| assert_ne!(s.name(), Some("s150"), "planted"),
                |()| Ok::<(), Error>(()),
            )
        });
        assert!(result.is_err());
    }
}
