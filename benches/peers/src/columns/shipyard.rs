pub fn columns() -> Vec<crate::cell::Column> {
    Vec::new()
}
