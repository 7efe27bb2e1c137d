//! Delivery of events to the listeners (`crate::listener`): the engine
//! queues an event wherever it happens, under its locks or not (a send on
//! a channel, nothing more); one thread per database hands them to every
//! listener in order. Closing the database ends the queue and waits until
//! the thread has delivered the rest.

use std::sync::mpsc::{channel, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::error::{Error, Result};
use crate::listener::{
    CompactionJobInfo, EventListener, ExternalFileIngestionInfo, FlushJobInfo,
    TableFileCreationInfo, TableFileDeletionInfo, WriteStallInfo,
};

/// One event, as queued.
#[derive(Debug)]
pub(crate) enum Event {
    FlushBegin(FlushJobInfo),
    FlushCompleted(FlushJobInfo),
    CompactionBegin(CompactionJobInfo),
    CompactionCompleted(CompactionJobInfo),
    TableFileCreated(TableFileCreationInfo),
    TableFileDeleted(TableFileDeletionInfo),
    ExternalFileIngested(ExternalFileIngestionInfo),
    BackgroundError(Error),
    StallConditionsChanged(WriteStallInfo),
}

impl Event {
    fn deliver(&self, listener: &dyn EventListener) {
        match self {
            Event::FlushBegin(i) => listener.on_flush_begin(i),
            Event::FlushCompleted(i) => listener.on_flush_completed(i),
            Event::CompactionBegin(i) => listener.on_compaction_begin(i),
            Event::CompactionCompleted(i) => listener.on_compaction_completed(i),
            Event::TableFileCreated(i) => listener.on_table_file_created(i),
            Event::TableFileDeleted(i) => listener.on_table_file_deleted(i),
            Event::ExternalFileIngested(i) => listener.on_external_file_ingested(i),
            Event::BackgroundError(e) => listener.on_background_error(e),
            Event::StallConditionsChanged(i) => listener.on_stall_conditions_changed(i),
        }
    }
}

/// The queue and its delivery thread; inert without listeners.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    /// `None` without listeners, and once closed.
    sender: Mutex<Option<Sender<Event>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl EventQueue {
    /// Starts delivering to `listeners` (nothing to start without any).
    pub(crate) fn start(listeners: &[Arc<dyn EventListener>]) -> Result<EventQueue> {
        if listeners.is_empty() {
            return Ok(EventQueue::default());
        }
        let (sender, receiver) = channel::<Event>();
        let listeners = listeners.to_vec();
        let thread = std::thread::Builder::new()
            .name("strata-events".into())
            .spawn(move || {
                for event in receiver {
                    for listener in &listeners {
                        event.deliver(&**listener);
                    }
                }
            })
            .map_err(|e| Error::io("spawn the event listener thread", "", e))?;
        Ok(EventQueue {
            sender: Mutex::new(Some(sender)),
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Whether anyone listens: callers skip building an event's details
    /// when not.
    pub(crate) fn active(&self) -> bool {
        self.sender.lock().is_some()
    }

    /// Queues `event` for the listeners (dropped when there are none).
    pub(crate) fn send(&self, event: Event) {
        if let Some(sender) = &*self.sender.lock() {
            // Fails only once the thread is gone, when nobody listens.
            let _ = sender.send(event);
        }
    }

    /// Ends the queue and waits until every queued event is delivered. A
    /// listener that panicked is reported as a panicked background thread.
    pub(crate) fn close(&self) -> Result<()> {
        drop(self.sender.lock().take());
        let thread = self.thread.lock().take();
        match thread.map(JoinHandle::join) {
            Some(Err(_)) => Err(Error::BackgroundThreadPanicked {
                thread: "strata-events".into(),
            }),
            _ => Ok(()),
        }
    }
}

/// A compaction's event details: at its start (`result` and `status`
/// `None`), or once it finished or failed.
pub(super) fn compaction_info(
    dir: &std::path::Path,
    cf_name: &str,
    task: &crate::compaction::CompactionTask,
    result: Option<&crate::compaction::job::JobResult>,
    status: Option<Error>,
) -> CompactionJobInfo {
    use crate::filename::table_file_name;
    let input_files: Vec<std::path::PathBuf> = task
        .all_inputs()
        .map(|(_, f)| table_file_name(dir, f.number))
        .collect();
    let stats = result.map_or_else(Default::default, |r| crate::listener::CompactionJobStats {
        elapsed_micros: r.micros,
        cpu_micros: r.cpu_micros,
        num_input_files: input_files.len() as u64,
        num_output_files: r.outputs.len() as u64,
        num_input_records: r.counts.keys_in,
        num_dropped_records: r.counts.keys_dropped,
        total_input_bytes: r.bytes_read_start + r.bytes_read_output + r.bytes_moved,
        total_output_bytes: r.bytes_written,
        is_trivial_move: r.bytes_moved > 0,
    });
    CompactionJobInfo {
        cf_name: cf_name.to_owned(),
        reason: format!("k{:?}", task.reason),
        base_input_level: task.start_level,
        output_level: task.output_level,
        input_files,
        output_files: result
            .map(|r| {
                r.outputs
                    .iter()
                    .map(|f| table_file_name(dir, f.number))
                    .collect()
            })
            .unwrap_or_default(),
        status,
        stats,
    }
}
