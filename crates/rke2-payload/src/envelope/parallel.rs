//! Streaming on several cores: the input is split on the calling thread, each Secret is worked
//! on by a pool of threads, and the results come back to the caller in input order.
//!
//! Memory stays bounded: at most a few Secrets per thread are in flight.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

use super::BootstrapSecret;
use super::stream::{StreamSummary, for_each_secret};
use crate::error::Error;
use crate::options::DecodeOptions;

/// Calls `work` on every bootstrap Secret of `reader` using `threads` worker threads, and
/// `sink` with each result in input order. With `threads` ≤ 1 everything runs on the calling
/// thread.
///
/// `sink` may stop the stream by returning an error.
pub fn map_secrets<R, T, W, S>(
    reader: R,
    options: &DecodeOptions,
    threads: usize,
    work: W,
    mut sink: S,
) -> Result<StreamSummary, Error>
where
    R: Read,
    T: Send,
    W: Fn(&BootstrapSecret<'_>) -> T + Sync,
    S: FnMut(T) -> Result<(), Error>,
{
    if threads <= 1 {
        return for_each_secret(reader, options, |secret| sink(work(secret)));
    }
    let capacity = threads * 4;
    std::thread::scope(|scope| {
        let (job_tx, job_rx) = mpsc::sync_channel::<(u64, BootstrapSecret<'static>)>(capacity);
        let (done_tx, done_rx) = mpsc::sync_channel::<(u64, T)>(capacity);
        let job_rx = Arc::new(Mutex::new(job_rx));
        for _ in 0..threads {
            let job_rx = Arc::clone(&job_rx);
            let done_tx = done_tx.clone();
            let work = &work;
            scope.spawn(move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((seq, secret)) = job else { return };
                    if done_tx.send((seq, work(&secret))).is_err() {
                        return;
                    }
                }
            });
        }
        drop(done_tx);
        let mut next = 0u64;
        let mut sent = 0u64;
        let mut pending: BTreeMap<u64, T> = BTreeMap::new();
        let mut deliver = |pending: &mut BTreeMap<u64, T>, next: &mut u64| -> Result<(), Error> {
            while let Some(result) = pending.remove(next) {
                sink(result)?;
                *next += 1;
            }
            Ok(())
        };
        let summary = for_each_secret(reader, options, |secret| {
            // Keep the number in flight bounded: collect results while the pool is full.
            while sent - next >= capacity as u64 {
                match done_rx.recv() {
                    Ok((seq, result)) => {
                        pending.insert(seq, result);
                        deliver(&mut pending, &mut next)?;
                    }
                    Err(_) => break,
                }
            }
            while let Ok((seq, result)) = done_rx.try_recv() {
                pending.insert(seq, result);
            }
            deliver(&mut pending, &mut next)?;
            job_tx
                .send((sent, secret.clone().into_owned()))
                .map_err(|_| Error::Empty)?;
            sent += 1;
            Ok(())
        });
        drop(job_tx);
        let summary = summary?;
        while next < sent {
            match done_rx.recv() {
                Ok((seq, result)) => {
                    pending.insert(seq, result);
                    deliver(&mut pending, &mut next)?;
                }
                Err(_) => break,
            }
        }
        Ok(summary)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_order_and_complete() {
        let mut list = String::from("{\"kind\":\"List\",\"items\":[");
        for i in 0..500 {
            if i > 0 {
                list.push(',');
            }
            list.push_str(&format!(
                "{{\"kind\":\"Secret\",\"metadata\":{{\"name\":\"s{i}\"}},\"stringData\":{{\"format\":\"cloud-config\",\"value\":\"#cloud-config\\nruncmd: []\\n\"}}}}"
            ));
        }
        list.push_str("]}");
        for threads in [0, 1, 2, 4] {
            let mut names = Vec::new();
            let summary = map_secrets(
                list.as_bytes(),
                &DecodeOptions::default(),
                threads,
                |s| s.name().unwrap_or("").to_owned(),
                |name| {
                    names.push(name);
                    Ok(())
                },
            )
            .unwrap();
            assert_eq!(summary.secrets, 500);
            let want: Vec<String> = (0..500).map(|i| format!("s{i}")).collect();
            assert_eq!(names, want, "{threads} threads");
        }
    }

    #[test]
    fn a_sink_error_stops_everything() {
        let list = "{\"items\":[{\"kind\":\"Secret\",\"stringData\":{\"value\":\"#cloud-config\\n\",\"format\":\"\"}},{\"kind\":\"Secret\",\"stringData\":{\"value\":\"#cloud-config\\n\",\"format\":\"\"}}]}";
        let result = map_secrets(
            list.as_bytes(),
            &DecodeOptions::default(),
            2,
            |_| (),
            |_| Err(Error::Empty),
        );
        assert!(matches!(result, Err(Error::Empty)));
    }
}
