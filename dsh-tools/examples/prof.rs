use dsh_tools::schema::{CompiledSchema, Root};
use serde_json::Value;
fn main() {
    let which = std::env::args().nth(1).unwrap_or("medium".into());
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(10000);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/data/");
    let (s, p) = match which.as_str() {
        "invalid" => ("medium", "invalid"),
        w => (w, w),
    };
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}{s}.schema.json")).unwrap())
            .unwrap();
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}{p}.json")).unwrap()).unwrap();
    let c = CompiledSchema::compile(&schema).unwrap();
    let mut total = 0;
    for _ in 0..n {
        total += c
            .validate_at(std::hint::black_box(&value), Root::Parameters)
            .len();
    }
    println!("{total}");
}
