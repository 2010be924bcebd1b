use super::lex::{lex, Tok};
use super::parse::parse;
use super::*;

fn segs(p: &[&str]) -> Vec<String> {
    p.iter().map(|s| s.to_string()).collect()
}

fn paths(src: &str) -> Vec<Vec<String>> {
    parse(src).refs.into_iter().map(|r| r.segs).collect()
}

#[test]
fn comments_strings_and_chars_hide_paths() {
    let src = r##"
        // use crate::a;
        /* crate::b /* nested crate::c */ crate::d */
        /// [`crate::e`]
        let s = "crate::f"; let r = r#"crate::g "quoted""#; let c = '"'; let l: &'static str = "";
        let b = b'\''; let q = ['\'','"']; crate::h::x(); let u = '\u{1F600}'; crate::h::x();
    "##;
    assert_eq!(paths(src), vec![segs(&["crate", "h", "x"]); 2]);
    let toks = lex("'a' 'b x");
    assert_eq!(toks[0].tok, Tok::Punct('\''), "'a' is a char literal, 'b a lifetime");
}

#[test]
fn use_trees_give_one_path_per_leaf() {
    let src = "use crate::a::{b, c::{d as e, self}, f::*};\nuse super::g;\nuse ::h::i;\nuse std::io;";
    let p = parse(src);
    let got: Vec<_> = p.refs.iter().map(|r| (r.segs.clone(), r.line)).collect();
    assert_eq!(
        got,
        vec![
            (segs(&["crate", "a", "b"]), 1),
            (segs(&["crate", "a", "c", "d"]), 1),
            (segs(&["crate", "a", "c"]), 1),
            (segs(&["crate", "a", "f"]), 1),
            (segs(&["super", "g"]), 2),
            (segs(&["std", "io"]), 4),
        ]
    );
    assert!(p.refs.iter().all(|r| r.reexport.is_none()));
    let p = parse("pub(crate) use a::{B as C, d::*};");
    let re: Vec<_> = p.refs.iter().map(|r| r.reexport.clone()).collect();
    assert_eq!(re, vec![Some("C".to_string()), Some("*".to_string())]);
}

#[test]
fn code_paths_and_test_modules() {
    let src = "fn f() { let x = super::a::B::new(); y.z::<T>(); Vec::<crate::q::R>::new(); }\n\
               #[cfg(test)]\nmod tests { use crate::hidden; }\n\
               #[cfg(test)]\n#[path = \"t.rs\"]\nmod other;\n\
               #[cfg(not(test))]\nmod real;\npub(in crate::vis) fn g() {}";
    let p = parse(src);
    assert_eq!(
        p.refs.iter().map(|r| r.segs.clone()).collect::<Vec<_>>(),
        vec![segs(&["super", "a", "B", "new"]), segs(&["Vec"]), segs(&["crate", "q", "R"])]
    );
    let mods: Vec<_> = p.mods.iter().map(|m| (m.name.as_str(), m.test, m.path_attr.clone())).collect();
    assert_eq!(mods, vec![("tests", true, None), ("other", true, Some("t.rs".into())), ("real", false, None)]);
    let items: Vec<_> = p.items.iter().map(|(_, n)| n.as_str()).collect();
    assert_eq!(items, vec!["f", "g"]);
}

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let p = dir.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

fn edges(g: &Graph) -> Vec<(String, String)> {
    g.edges.iter().map(|e| (e.from.display().to_string(), e.to.display().to_string())).collect()
}

#[test]
fn a_circle_through_crate_and_super_paths_is_found() {
    let dir = crate::scratch_dir("layout-cycle");
    write(
        &dir,
        &[
            ("src/lib.rs", "mod a;\nmod b;\npub mod net;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct A;\n"),
            ("src/b.rs", "pub struct B;\nfn f() { crate::net::dns::go(); }\n"),
            ("src/net/mod.rs", "mod dns;\npub const N: u8 = 1;\n"),
            ("src/net/dns.rs", "pub fn go() { let _ = super::N; let _ = crate::a::A; }\n"),
        ],
    );
    let g = build(&dir.join("src/lib.rs"), &dir);
    let cycles = g.cycles();
    assert_eq!(cycles.len(), 1, "{cycles:?}");
    let mut files: Vec<_> = cycles[0].iter().map(|e| e.from.display().to_string()).collect();
    files.sort();
    assert_eq!(files, vec!["src/a.rs", "src/b.rs", "src/net/dns.rs"]);
    assert!(edges(&g).contains(&("src/net/dns.rs".into(), "src/net/mod.rs".into())));
    assert!(!edges(&g).contains(&("src/net/mod.rs".into(), "src/net/dns.rs".into())), "a declaration is not an edge");
}

#[test]
fn reexports_lead_to_the_defining_file_and_tests_are_exempt() {
    let dir = crate::scratch_dir("layout-reexport");
    write(
        &dir,
        &[
            ("src/lib.rs", "pub mod server;\npub mod http;\nmod state;\npub use state::Shared;\n"),
            ("src/server.rs", "pub fn serve() { crate::http::handle(); }\n"),
            (
                "src/http.rs",
                "use crate::Shared;\npub fn handle() {}\n#[cfg(test)]\nmod tests { use crate::server::serve; }\n",
            ),
            ("src/state.rs", "pub struct Shared;\n"),
        ],
    );
    let g = build(&dir.join("src/lib.rs"), &dir);
    assert!(g.cycles().is_empty(), "{:?}", g.edges);
    assert!(edges(&g).contains(&("src/http.rs".into(), "src/state.rs".into())), "{:?}", g.edges);
    let layers = [("server", 3), ("http", 2), ("state", 1)];
    assert!(upward(&g, &layers).is_empty());
    let wrong = [("server", 1), ("http", 2), ("state", 3)];
    let up: Vec<_> = upward(&g, &wrong).into_iter().map(|(e, _, _)| e.from.display().to_string()).collect();
    assert_eq!(up, vec!["src/http.rs", "src/server.rs"]);
}

#[test]
fn glob_reexports_and_child_paths_resolve() {
    let dir = crate::scratch_dir("layout-glob");
    write(
        &dir,
        &[
            ("src/main.rs", "mod crd;\nmod run;\nfn main() { run::go(); }\n"),
            ("src/crd/mod.rs", "mod types;\npub use types::*;\n"),
            ("src/crd/types.rs", "pub struct Agent;\n"),
            ("src/run.rs", "use crate::crd::Agent;\npub fn go() {}\n"),
        ],
    );
    let g = build(&dir.join("src/main.rs"), &dir);
    let e = edges(&g);
    assert!(e.contains(&("src/run.rs".into(), "src/crd/types.rs".into())), "{e:?}");
    assert!(e.contains(&("src/main.rs".into(), "src/run.rs".into())), "{e:?}");
    assert_eq!(top_modules(&g), vec!["crd", "run"]);
}

#[test]
fn whole_reason_is_read_from_the_first_lines() {
    assert_eq!(whole_reason("//! doc\n// whole: one state machine\nfn f() {}"), Some("one state machine"));
    assert_eq!(whole_reason("// whole:\n"), None);
    assert_eq!(whole_reason("fn f() {}\n"), None);
}
