//! Running the implementation: its command line read from where the user stands, its own process
//! group, the timeout, its output capped and the last lines of its standard error kept.

use super::*;

/// How the implementation's run on one file ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Killed,
    TimedOut,
    NotStarted(String),
}

impl Ending {
    pub(super) fn why(&self) -> String {
        match self {
            Ending::Exited(0) => "the implementation wrote no line for it".into(),
            Ending::Exited(c) => format!("the implementation exited with status {c} before answering"),
            Ending::Killed => "the implementation was killed by a signal before answering".into(),
            Ending::TimedOut => "the implementation did not answer within the timeout".into(),
            Ending::NotStarted(e) => format!("the implementation could not be started: {e}"),
        }
    }
}

/// The implementation's command line with every word that names an existing file or directory
/// relative to where the grader was started made absolute (the implementation runs with the tree
/// as its working directory): a program path with a `/` (a bare program name is looked up on `PATH`)
/// and any later argument (`python3 fill.py` → `python3 /abs/fill.py`). Everything else, quoting,
/// flags and `NAME=value` words included, is kept as written.
pub fn command_line(implementation: &str) -> String {
    let mut out = String::new();
    let mut at = 0;
    let mut program_seen = false;
    for (start, word) in words(implementation) {
        out.push_str(&implementation[at..start]);
        at = start + word.len();
        let assignment = word.contains('=');
        let is_program = !program_seen && !assignment;
        program_seen |= is_program;
        let path = Path::new(word);
        let candidate = !assignment
            && !word.starts_with('-')
            && path.is_relative()
            && (!is_program || word.contains('/'))
            && path.exists();
        match candidate.then(|| std::fs::canonicalize(path)) {
            Some(Ok(abs)) => out.push_str(&shell_word(&abs.to_string_lossy())),
            _ => out.push_str(word),
        }
    }
    out.push_str(&implementation[at..]);
    out
}

/// The whitespace-separated words of a command line with their byte offsets.
fn words(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in s.char_indices() {
        match (ch.is_whitespace(), start) {
            (true, Some(b)) => {
                out.push((b, &s[b..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, &s[b..]));
    }
    out
}

/// A path as one `sh` word: as is when it is plain, single-quoted otherwise.
fn shell_word(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._+-,:@%".contains(c);
    if path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

/// The program the implementation's command line runs: its first word that is no `NAME=value`.
pub(super) fn program(implementation: &str) -> &str {
    words(implementation)
        .into_iter()
        .map(|(_, w)| w)
        .find(|w| !w.contains('='))
        .unwrap_or("")
}

/// The last lines the implementation wrote to its standard error: at most [`Stderr::LINES`] lines
/// and [`Stderr::BYTES`] bytes are ever held, older ones dropped as newer ones arrive.
#[derive(Default)]
struct Stderr {
    lines: std::collections::VecDeque<Vec<u8>>,
    /// The line being written, its first [`Stderr::BYTES`] bytes.
    current: Vec<u8>,
    /// Bytes of `lines`.
    bytes: usize,
}

impl Stderr {
    const LINES: usize = 20;
    const BYTES: usize = 4096;

    fn push(&mut self, chunk: &[u8]) {
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let (text, ends) = match piece.strip_suffix(b"\n") {
                Some(t) => (t, true),
                None => (piece, false),
            };
            let room = Stderr::BYTES.saturating_sub(self.current.len());
            self.current.extend_from_slice(&text[..text.len().min(room)]);
            if ends {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.current);
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > Stderr::LINES || (self.bytes > Stderr::BYTES && self.lines.len() > 1) {
            let gone = self.lines.pop_front().map_or(0, |l| l.len());
            self.bytes -= gone;
        }
    }

    fn tail(mut self) -> Vec<String> {
        if !self.current.is_empty() {
            self.end_line();
        }
        self.lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }
}

/// One line of the implementation's output, as the grader read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A whole line, without its line feed.
    Line(Vec<u8>),
    /// A line longer than its record's allowance, `cap` bytes: the rest was read and dropped.
    TooLong { cap: usize },
}

/// Runs the implementation on `input` with the tree as its working directory; one answer per entry
/// of `caps` (each line held to its cap; fewer when the output ends first, the rest of the output
/// read and dropped) and how it ended. Never waits past `timeout`.
pub fn run(
    implementation: &str,
    tree: &Path,
    input: Vec<u8>,
    timeout: Duration,
    caps: Vec<usize>,
) -> (Vec<Answer>, Ending) {
    let (out, ending, _) = run_capturing(implementation, tree, input, timeout, caps);
    (out, ending)
}

/// [`run`], with the last lines of the implementation's standard error.
pub fn run_capturing(
    implementation: &str,
    tree: &Path,
    input: Vec<u8>,
    timeout: Duration,
    caps: Vec<usize>,
) -> (Vec<Answer>, Ending, Vec<String>) {
    // What the reader has kept so far stays ours even if a stray descendant holds the pipe open.
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (ending, stderr) = supervise(
        implementation,
        tree,
        timeout,
        move |mut stdin| {
            // A broken pipe (the implementation stopped reading) is the implementation's failure.
            let _ = stdin.write_all(&input);
        },
        {
            let kept = kept.clone();
            move |stdout| {
                let mut stdout = BufReader::new(stdout);
                for cap in caps {
                    let Some(answer) = read_line(&mut stdout, cap) else {
                        return;
                    };
                    lock(&kept).push(answer);
                }
                let _ = std::io::copy(&mut stdout, &mut std::io::sink());
            }
        },
    );
    let out = std::mem::take(&mut *lock(&kept));
    (out, ending, stderr)
}

/// The next line of `r`: a line longer than `cap` bytes is read to its end and dropped, with no
/// more than `cap` bytes of it held. `None` at the end of the output.
pub(super) fn read_line(r: &mut impl BufRead, cap: usize) -> Option<Answer> {
    let mut line = Vec::new();
    // One byte past the cap tells a longer line.
    let n = r.take(cap as u64 + 1).read_until(b'\n', &mut line).ok()?;
    if n == 0 {
        return None;
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > cap {
        let _ = r.skip_until(b'\n');
        return Some(Answer::TooLong { cap });
    }
    Some(Answer::Line(line))
}

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the implementation with the tree as its working directory, `write` feeding its standard
/// input and `read` taking its standard output, each on a thread of its own; how it ended. Never
/// waits past `timeout` for the implementation, and after it ends waits for `read` only while
/// `read` works on what it received, not while it waits on a pipe a stray descendant holds open.
/// The last lines of its standard error come back with how it ended.
pub(super) fn supervise(
    implementation: &str,
    tree: &Path,
    timeout: Duration,
    write: impl FnOnce(ChildStdin) + Send + 'static,
    read: impl FnOnce(Pipe) + Send + 'static,
) -> (Ending, Vec<String>) {
    use std::os::unix::process::CommandExt;
    // Its own process group, so that a timeout kills the shell and everything it started.
    let child = Command::new("sh")
        .arg("-c")
        .arg(command_line(implementation))
        .process_group(0)
        .current_dir(tree)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return (Ending::NotStarted(e.to_string()), vec![]),
    };
    let stderr = Arc::new(Mutex::new(Stderr::default()));
    let errors = {
        let (mut pipe, stderr) = (child.stderr.take().expect("piped"), stderr.clone());
        Finishing::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                lock(&stderr).push(&buf[..n]);
            }
        })
    };
    let stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || write(stdin));
    let pipe = Pipe {
        out: child.stdout.take().expect("piped"),
        waits: Arc::default(),
    };
    let waits = pipe.waits.clone();
    let reader = Finishing::spawn(move || read(pipe));
    let ending = wait(child, timeout);
    let _ = writer.join();
    waits.outlast(&reader);
    // A stray descendant may hold standard error open too: what arrived by now is kept.
    errors.wait(Duration::from_millis(200));
    let tail = std::mem::take(&mut *lock(&stderr)).tail();
    (ending, tail)
}

/// A thread that says when it has finished: [`Finishing::wait`] returns as soon as it has, with no
/// polling delay (the grader's cost per file, docs/bench.md).
pub(super) struct Finishing {
    /// Disconnected when the thread ends.
    done: std::sync::mpsc::Receiver<()>,
}

impl Finishing {
    pub(super) fn spawn(f: impl FnOnce() + Send + 'static) -> Finishing {
        let (tx, done) = std::sync::mpsc::channel::<()>();
        std::thread::spawn(move || {
            let _finished = tx;
            f();
        });
        Finishing { done }
    }

    /// Waits at most `timeout` for the thread to finish; whether it has.
    pub(super) fn wait(&self, timeout: Duration) -> bool {
        use std::sync::mpsc::RecvTimeoutError;
        !matches!(self.done.recv_timeout(timeout), Err(RecvTimeoutError::Timeout))
    }
}

/// Waits for the implementation to end, killing it and everything it started at `timeout`. The
/// wait blocks on the process (a thread of its own reaps it), so that an implementation that
/// answers in a millisecond costs a millisecond.
fn wait(mut child: Child, timeout: Duration) -> Ending {
    let group = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    let status = match rx.recv_timeout(timeout) {
        Ok(status) => status,
        Err(_) => {
            // Its own process group (`process_group(0)`, led by `sh`): the shell and everything
            // it started.
            // SAFETY: kill(2) with a negative pid signals that process group; no memory is touched.
            unsafe { libc::kill(-(group as libc::pid_t), libc::SIGKILL) };
            let _ = rx.recv();
            return Ending::TimedOut;
        }
    };
    match status {
        Ok(status) => status.code().map_or(Ending::Killed, Ending::Exited),
        Err(e) => Ending::NotStarted(e.to_string()),
    }
}

/// The implementation's standard output, noting when its reader waits on it.
pub(super) struct Pipe {
    out: ChildStdout,
    waits: Arc<Waits>,
}

#[derive(Default)]
struct Waits {
    /// The reader is inside a read of the pipe.
    waiting: AtomicBool,
    /// Reads returned so far.
    reads: AtomicU64,
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.waits.waiting.store(true, Ordering::SeqCst);
        let n = self.out.read(buf);
        self.waits.reads.fetch_add(1, Ordering::SeqCst);
        self.waits.waiting.store(false, Ordering::SeqCst);
        n
    }
}

impl Waits {
    /// Waits for `reader` to finish once the implementation has ended: as long as it works on what
    /// it received (a scale answer takes seconds to fold), but only half a second of it waiting on
    /// the pipe with nothing coming (a killed implementation's descendant may hold it open).
    fn outlast(&self, reader: &Finishing) {
        let mut seen = (u64::MAX, Instant::now());
        while !reader.wait(Duration::from_millis(5)) {
            let reads = self.reads.load(Ordering::SeqCst);
            if reads != seen.0 || !self.waiting.load(Ordering::SeqCst) {
                seen = (reads, Instant::now());
            } else if seen.1.elapsed() >= Duration::from_millis(500) {
                return;
            }
        }
    }
}
