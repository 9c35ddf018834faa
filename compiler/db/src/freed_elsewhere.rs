//! Large query values freed on a thread of their own.
//!
//! salsa frees the value a query computed two revisions ago when the next input is set: for the
//! project's type table, thousands of entities and tens of thousands of strings, several
//! milliseconds spent inside the editor's `didChange`, before the edited file is checked. A
//! value wrapped in [`FreedElsewhere`] is handed to a background thread instead, which frees it
//! while the check runs on another core.

use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

/// A value that frees itself on the dropping thread (see the module doc). It reads as the value
/// (`Deref`), and compares as it.
#[derive(Debug, Clone)]
pub struct FreedElsewhere<T: Send + 'static>(Option<Box<T>>);

impl<T: Send + 'static> FreedElsewhere<T> {
    pub fn new(value: T) -> FreedElsewhere<T> {
        FreedElsewhere(Some(Box::new(value)))
    }
}

impl<T: Send + 'static> std::ops::Deref for FreedElsewhere<T> {
    type Target = T;

    fn deref(&self) -> &T {
        match &self.0 {
            Some(value) => value,
            // Only `drop` takes the value out, and nothing reads a value being dropped.
            None => unreachable!("a FreedElsewhere is read only while it holds its value"),
        }
    }
}

impl<T: Send + PartialEq + 'static> PartialEq for FreedElsewhere<T> {
    fn eq(&self, other: &FreedElsewhere<T>) -> bool {
        self.0 == other.0
    }
}

impl<T: Send + 'static> Drop for FreedElsewhere<T> {
    fn drop(&mut self) {
        let Some(value) = self.0.take() else { return };
        match dropper() {
            // When the thread is gone (the process is ending), the value is freed here.
            Some(sender) => {
                if let Err(returned) = sender.send(value) {
                    drop(returned.0);
                }
            }
            None => drop(value),
        }
    }
}

type Garbage = Box<dyn Send>;

/// The channel to the thread that frees values; `None` when it could not be started.
fn dropper() -> Option<Sender<Garbage>> {
    static SENDER: OnceLock<Option<std::sync::Mutex<Sender<Garbage>>>> = OnceLock::new();
    let sender = SENDER.get_or_init(|| {
        let (sender, receiver) = channel::<Garbage>();
        let started = std::thread::Builder::new()
            .name("modelc-free".to_owned())
            .spawn(move || receiver.into_iter().for_each(drop));
        started.ok().map(|_| std::sync::Mutex::new(sender))
    });
    sender.as_ref().and_then(|s| s.lock().ok()).map(|s| s.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Says on which thread it was freed.
    struct Tell(std::sync::mpsc::Sender<String>);

    impl Drop for Tell {
        fn drop(&mut self) {
            let name = std::thread::current().name().unwrap_or_default().to_owned();
            let _ = self.0.send(name);
        }
    }

    #[test]
    fn a_value_is_read_in_place_and_freed_on_the_freeing_thread() {
        let (sender, freed) = channel();
        let value = FreedElsewhere::new((7, Tell(sender)));
        assert_eq!((*value).0, 7);
        drop(value);
        let thread = freed.recv_timeout(std::time::Duration::from_secs(10)).expect("the value was freed");
        assert_eq!(thread, "modelc-free");
    }
}
