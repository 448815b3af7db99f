//! A call's progress reports forwarded to the MCP client as `notifications/progress`, in
//! order and all before the response, with a bounded queue for a slow client.

use crate::call::{Progress, ProgressSink, ToolExecutionInput};
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use std::future::Future;
use std::sync::{Arc, Mutex};

/// Progress reports not sent yet to the client: at most this many wait; older ones are dropped.
pub const MAX_PENDING_PROGRESS: usize = 64;

/// Runs `run(input)` while forwarding its progress reports to `peer` under `token`, in order,
/// all before the response (anything sent after it would be dropped). At most
/// [`MAX_PENDING_PROGRESS`] wait for a slow client; past that the oldest are dropped, so the
/// latest always goes out and a tool reporting a million times holds 64, not a million.
pub(super) async fn forwarding<T, F>(
    input: ToolExecutionInput,
    token: ProgressToken,
    peer: &Peer<RoleServer>,
    run: impl FnOnce(ToolExecutionInput) -> F,
) -> T
where
    F: Future<Output = T>,
{
    let pending = Arc::new(PendingProgress::default());
    let sink = Arc::clone(&pending);
    let input = input.progress(ProgressSink::new(move |p| sink.push(p)));
    let send = |p: Progress| {
        let param = param(&token, p);
        async move {
            if let Err(e) = peer.notify_progress(param).await {
                tracing::debug!("MCP: progress notification not sent: {e}");
            }
        }
    };
    let call = run(input);
    tokio::pin!(call);
    let result = loop {
        tokio::select! {
            biased;
            () = pending.ready.notified() => {
                while let Some(p) = pending.pop() {
                    send(p).await;
                }
            }
            result = &mut call => break result,
        }
    };
    while let Some(p) = pending.pop() {
        send(p).await;
    }
    result
}

/// A sink forwarding progress reports to `peer` under `token` for as long as the call holds it
/// (a call detached as a 2025-11-25 task reports after its `tools/call` was answered), in
/// order, at most [`MAX_PENDING_PROGRESS`] waiting. The forwarding task ends when the sink is
/// dropped (the call ended) or the client is gone.
pub(super) fn detached(token: ProgressToken, peer: Peer<RoleServer>) -> ProgressSink {
    let pending = Arc::new(PendingProgress::default());
    let feed = Feed(Arc::clone(&pending));
    tokio::spawn(async move {
        loop {
            pending.ready.notified().await;
            while let Some(p) = pending.pop() {
                if peer.notify_progress(param(&token, p)).await.is_err() {
                    return;
                }
            }
            if pending.closed.load(std::sync::atomic::Ordering::Acquire) {
                return;
            }
        }
    });
    ProgressSink::new(move |p| feed.0.push(p))
}

/// The sink's end of the queue: dropped with the sink, it tells the forwarding task to stop
/// once the queue is empty.
struct Feed(Arc<PendingProgress>);

impl Drop for Feed {
    fn drop(&mut self) {
        self.0
            .closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.0.ready.notify_one();
    }
}

fn param(token: &ProgressToken, p: Progress) -> ProgressNotificationParam {
    let mut param = ProgressNotificationParam::new(token.clone(), p.progress);
    if let Some(total) = p.total {
        param = param.with_total(total);
    }
    if let Some(message) = p.message {
        param = param.with_message(message);
    }
    param
}

#[derive(Default)]
struct PendingProgress {
    closed: std::sync::atomic::AtomicBool,
    queue: Mutex<std::collections::VecDeque<Progress>>,
    ready: tokio::sync::Notify,
}

impl PendingProgress {
    fn push(&self, p: Progress) {
        let mut queue = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if queue.len() >= MAX_PENDING_PROGRESS {
            queue.pop_front();
        }
        queue.push_back(p);
        drop(queue);
        self.ready.notify_one();
    }

    fn pop(&self) -> Option<Progress> {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
    }
}
