//! Running a step under guard: panics recorded instead of printed, and a
//! watchdog that aborts the run on a hung command.

#[allow(unused_imports)]
use super::*;

/// What the panic hook saw last (message and location).
pub(crate) static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// The command in flight and when it started, for the hang watchdog.
pub(crate) static IN_FLIGHT: Mutex<Option<(Instant, String)>> = Mutex::new(None);

thread_local! {
    /// Whether this thread is inside [`guarded`].
    static GUARDED: Cell<bool> = const { Cell::new(false) };
}

/// Records panics inside [`guarded`] instead of printing them (shrinking repeats them), and
/// starts a watchdog that aborts the run, naming the command, if one
/// command runs for longer than [`HANG_LIMIT`].
pub(crate) fn install_hooks() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !GUARDED.with(Cell::get) {
                return default(info);
            }
            if let Ok(mut last) = LAST_PANIC.lock() {
                *last = Some(info.to_string());
            }
        }));
        std::thread::spawn(|| loop {
            std::thread::sleep(Duration::from_millis(500));
            let stuck = IN_FLIGHT
                .lock()
                .ok()
                .and_then(|g| g.as_ref().cloned())
                .filter(|(t, _)| t.elapsed() > HANG_LIMIT);
            if let Some((_, what)) = stuck {
                eprintln!("hang: {what} ran for more than {HANG_LIMIT:?}");
                std::process::abort();
            }
        });
    });
}

pub(crate) fn show(argv: &[&[u8]]) -> String {
    let parts: Vec<String> = argv
        .iter()
        .map(|a| format!("\"{}\"", a.escape_ascii()))
        .collect();
    parts.join(" ")
}

/// Runs `f` with the watchdog armed; a panic becomes a test failure
/// naming `what` and the panic message.
pub(crate) fn guarded<R>(what: &str, f: impl FnOnce() -> R) -> Result<R, TestCaseError> {
    if let Ok(mut g) = IN_FLIGHT.lock() {
        *g = Some((Instant::now(), what.to_string()));
    }
    GUARDED.with(|g| g.set(true));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(false));
    if let Ok(mut g) = IN_FLIGHT.lock() {
        *g = None;
    }
    r.map_err(|_| {
        let msg = LAST_PANIC
            .lock()
            .ok()
            .and_then(|mut g| g.take())
            .unwrap_or_default();
        TestCaseError::fail(format!("panic in {what}: {msg}"))
    })
}
