use dsh_tools::FastCheck;

#[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
struct Page<T> {
    items: Vec<T>,
}

#[derive(serde::Deserialize, schemars::JsonSchema, FastCheck)]
#[dsh_tools(krate = dsh_tools)]
struct Misspelt {
    n: u8,
}

fn main() {}
