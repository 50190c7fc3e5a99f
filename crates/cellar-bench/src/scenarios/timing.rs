//! How the scenarios time their reads: every table's calls in turns, medians per table.

use std::time::Instant;

/// The median time of one call in µs for each of `tables`, over `reps` calls each
/// after a warm-up call: the tables take turns in rounds of a few calls, so that every
/// table's calls meet the same states of the machine. (On a shared host the same read
/// moves between two speeds about 1.4x apart for seconds at a time, where a plain
/// arithmetic loop does not: a neighbour's load on the caches, not the clock. Reads of
/// one table after another's would compare two states.)
pub fn interleaved_micros<T>(
    tables: &[T],
    reps: u32,
    mut f: impl FnMut(&T) -> Result<(), String>,
) -> Result<Vec<f64>, String> {
    const PER_TURN: u32 = 10;
    let mut times: Vec<Vec<f64>> = tables.iter().map(|_| Vec::new()).collect();
    for t in tables {
        f(t)?;
    }
    let reps = reps.max(1);
    let mut done = 0;
    while done < reps {
        let n = PER_TURN.min(reps - done);
        for (t, ts) in tables.iter().zip(&mut times) {
            for _ in 0..n {
                let start = Instant::now();
                f(t)?;
                ts.push(start.elapsed().as_secs_f64() * 1e6);
            }
        }
        done += n;
    }
    Ok(times
        .into_iter()
        .map(|t| crate::summary::spread(t).1)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::interleaved_micros;
    use std::cell::RefCell;

    #[test]
    fn tables_take_turns_after_one_warm_up_call_each() {
        let calls = RefCell::new(Vec::new());
        let medians = interleaved_micros(&[0usize, 1, 2], 25, |t| {
            calls.borrow_mut().push(*t);
            Ok(())
        })
        .unwrap();
        assert_eq!(medians.len(), 3);
        let calls = calls.into_inner();
        assert_eq!(calls.len(), 3 + 3 * 25);
        assert_eq!(&calls[..3], &[0, 1, 2]);
        // Turns of ten calls, the last one shorter: 10, 10, 5 calls per table.
        let mut turns = Vec::new();
        for c in &calls[3..] {
            match turns.last_mut() {
                Some((t, n)) if t == c => *n += 1,
                _ => turns.push((*c, 1)),
            }
        }
        let expected: Vec<(usize, usize)> = [10, 10, 5]
            .iter()
            .flat_map(|&n| (0..3).map(move |t| (t, n)))
            .collect();
        assert_eq!(turns, expected);
    }

    #[test]
    fn a_failing_call_ends_the_measurement() {
        let r = interleaved_micros(&[0usize, 1], 10, |t| {
            if *t == 1 {
                Err("no such row".to_string())
            } else {
                Ok(())
            }
        });
        assert_eq!(r, Err("no such row".to_string()));
    }
}
