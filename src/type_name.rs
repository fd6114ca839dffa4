//! Short type names: what a system or collector is called when it is not
//! named, and what it prints.

/// `type_name` without the module path in front of the type's own name:
/// everything up to the last `::` before the first `<` is dropped.
pub(crate) fn short_type_name(full: &str) -> &str {
    let head = full.find('<').map_or(full, |generics| &full[..generics]);
    match head.rfind("::") {
        Some(separator) => &full[separator + 2..],
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::short_type_name;

    #[test]
    fn short_type_name_drops_the_module_path_before_generics() {
        assert_eq!(short_type_name("game::Move"), "Move");
        assert_eq!(short_type_name("Move"), "Move");
        assert_eq!(
            short_type_name("reactecs::system::Reactive<game::Render>"),
            "Reactive<game::Render>"
        );
        assert_eq!(
            short_type_name("a::b::Pair<x::A, y::B<z::C>>"),
            "Pair<x::A, y::B<z::C>>"
        );
    }
}
