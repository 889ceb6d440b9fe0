//! The five recipes as single ebb commands, through the Rust `redis` crate.
//! Usage: `cargo run -p ebb-server --example recipes -- [port]`.

use redis::Commands;

fn main() -> redis::RedisResult<()> {
    let port = std::env::args().nth(1).unwrap_or_else(|| "6379".into());
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/"))?;
    let mut c = client.get_connection()?;
    let _: () = redis::cmd("DEL")
        .arg(&["rs:ts", "rs:cnt", "rs:seen", "rs:recent", "rs:otp"])
        .query(&mut c)?;

    // 1. Expiring values: each pushed value lives 2 minutes.
    let added: i64 = redis::cmd("ZADDEX")
        .arg("rs:ts")
        .arg("PX")
        .arg(120_000)
        .arg(1)
        .arg("cpu=40%")
        .query(&mut c)?;
    assert_eq!(added, 1);

    // 2. Per-minute counters keeping the last 5 buckets.
    for _ in 0..3 {
        let _: f64 = redis::cmd("ZADDEX")
            .arg("rs:cnt")
            .arg("INCR")
            .arg("KEEPTTL")
            .arg("EX")
            .arg(300)
            .arg(1)
            .arg("minute:42")
            .query(&mut c)?;
    }
    let count: f64 = c.zscore("rs:cnt", "minute:42")?;
    assert_eq!(count, 3.0);

    // 3. De-duplication for 60 days.
    let first: i64 = redis::cmd("SADDEX")
        .arg("rs:seen")
        .arg(5_184_000)
        .arg("order-1")
        .query(&mut c)?;
    let again: bool = c.sismember("rs:seen", "order-1")?;
    assert!(first == 1 && again);

    // 4. The 3 most recently viewed pages.
    for (ts, page) in ["/a", "/b", "/c", "/d"].iter().enumerate() {
        let _: i64 = redis::cmd("ZADDEX")
            .arg("rs:recent")
            .arg("CAP")
            .arg(3)
            .arg("EX")
            .arg(3600)
            .arg(ts)
            .arg(*page)
            .query(&mut c)?;
    }
    let recent: Vec<String> = c.zrevrange("rs:recent", 0, -1)?;
    assert_eq!(recent, vec!["/d", "/c", "/b"]);

    // 5. At most 2 live one-time codes per phone in 5 minutes.
    let replies: Vec<i64> = ["111", "222", "333"]
        .iter()
        .map(|code| {
            redis::cmd("SADDEX")
                .arg("rs:otp")
                .arg("LIMIT")
                .arg(2)
                .arg(300)
                .arg(*code)
                .query(&mut c)
        })
        .collect::<redis::RedisResult<_>>()?;
    assert_eq!(replies, vec![1, 1, -1]);

    println!("all five recipes OK");
    Ok(())
}
