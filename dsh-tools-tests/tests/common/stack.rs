//! Deep values and a worker-sized stack, for the tests that feed hostile nesting to public
//! entries (a stack overflow aborts the whole test binary, so a regression shows as a crash).

use serde_json::{Value, json};

/// Runs `f` on a thread with a tokio worker's 2 MiB stack, in a current-thread runtime.
pub(crate) fn on_worker_stack<F, Fut>(f: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(f())
        })
        .unwrap()
        .join()
        .expect("the check ran out of stack or panicked");
}

/// `[[[…0…]]]`, `depth` levels, built without recursion.
pub(crate) fn deep_array(depth: usize) -> Value {
    let mut v = json!(0);
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}
