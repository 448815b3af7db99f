// every mistake in one `#[derive(FastCheck)]` is reported in one compile, not only the first
use dsh_tools::FastCheck;

#[derive(FastCheck)]
#[dsh_tools(krate = dsh_tools, compact)]
#[serde(tag = 1)]
enum Shape<T> {
    #[serde(rename = 2)]
    Circle { radius: T },
    #[serde(rename = 3)]
    Square { side: T },
}

fn main() {}
