//! The name half of the credential rule: stems, whole words, vendors' names, and the
//! non-secret names around those words.

/// Stems that mean a secret wherever they appear in a name (`PGPASSWORD`,
/// `AZURE_CLIENT_SECRET`, `GOOGLE_APPLICATION_CREDENTIALS`, `NGROK_AUTHTOKEN`,
/// `TS_AUTHKEY`, `AZURE_STORAGE_CONNECTION_STRING`, `HTTP_AUTHORIZATION`), in upper case.
const STEMS: &[&[u8]] = &[
    b"SECRET",
    b"PASSWORD",
    b"PASSWD",
    b"PASSPHRASE",
    b"CREDENTIAL",
    b"APIKEY",
    b"ACCESSKEY",
    b"AUTHTOKEN",
    b"AUTHKEY",
    b"ACCESSTOKEN",
    b"PRIVATEKEY",
    b"CONNECTIONSTRING",
    b"CONNECTION_STRING",
    b"AUTHORIZATION",
];

/// Short words that mean a secret only as a whole word: `OPENAI_API_KEY`, `GITHUB_TOKEN`,
/// `SMTP_PASS`, `AZURE_DEVOPS_EXT_PAT`, `CI_JOB_JWT`, `DB_CREDS`, but not `KEYTIMEOUT`,
/// `TOKENIZERS_PARALLELISM`, `TIKTOKEN_CACHE_DIR`, `GIT_ASKPASS` or `PATH`. Signing
/// stores as CI keeps them, a private key inside: `ANDROID_KEYSTORE_BASE64`,
/// `SIGNING_PFX`, `UPLOAD_JKS` (`P12` and `PKCS12` split at the digits, and `TOKEN` glued
/// to a word: see [`has_credential_word`] and [`glued`]).
const WORDS: &[&[u8]] =
    &[b"KEY", b"KEYS", b"TOKEN", b"PASS", b"PAT", b"JWT", b"CREDS", b"BEARER", b"KEYSTORE", b"PFX", b"JKS"];

/// Credential names no rule above catches, from the tools' own documentation, as
/// case-insensitive patterns (`OP_SESSION_*`: 1Password CLI sessions;
/// `OTEL_EXPORTER_OTLP_*HEADERS`: OpenTelemetry's exporter headers, where observability
/// vendors take their API keys; `PGPASSFILE` and `NETRC`: libpq's and Go's password files;
/// Neo4j's `user/password`, Consul's and Yarn's `user:password`; a Slack webhook URL is
/// itself the secret; `KUBE_CONFIG_DATA`: a whole kubeconfig, keys included, in CI;
/// `FASTLANE_SESSION`: the Apple ID session cookie fastlane's spaceship logs in with,
/// <https://docs.fastlane.tools/best-practices/continuous-integration/#two-step-or-two-factor-auth>;
/// electron-builder's `CSC_LINK`, `CSC_INSTALLER_LINK` and `WIN_CSC_LINK`: a signing
/// `.p12`/`.pfx` as base64 data, a link or a path, <https://www.electron.build/code-signing>).
const NAMES: &[&[u8]] = &[
    b"DOCKER_AUTH_CONFIG",
    b"REDISCLI_AUTH",
    b"SSHPASS",
    b"NPM_CONFIG__AUTH",
    b"BW_SESSION",
    b"OP_SESSION_*",
    b"KRB5CCNAME",
    b"AZURE_CLIENT_CERTIFICATE_PATH",
    b"OTEL_EXPORTER_OTLP_HEADERS",
    b"OTEL_EXPORTER_OTLP_*_HEADERS",
    b"PGPASSFILE",
    b"NETRC",
    b"NEO4J_AUTH",
    b"CONSUL_HTTP_AUTH",
    b"YARN_NPM_AUTH_IDENT",
    b"SLACK_WEBHOOK_URL",
    b"KUBE_CONFIG_DATA",
    b"FASTLANE_SESSION",
    b"CSC_LINK",
    b"CSC_INSTALLER_LINK",
    b"WIN_CSC_LINK",
];

/// Names tools document that a stem catches but that hold no secret: where `pass` keeps
/// its (encrypted) store and how it behaves, and `KUBECONFIG`, the path list every
/// Kubernetes client needs to find its cluster at all (the files it names are `denyRead`'s
/// job, as for every credential file). Exact names, compared ignoring case.
const NOT_SECRET: &[&[u8]] = &[
    b"KUBECONFIG",
    b"PASSWORD_STORE_DIR",
    b"PASSWORD_STORE_KEY",
    b"PASSWORD_STORE_SIGNING_KEY",
    b"PASSWORD_STORE_GPG_OPTS",
    b"PASSWORD_STORE_X_SELECTION",
    b"PASSWORD_STORE_CLIP_TIME",
    b"PASSWORD_STORE_UMASK",
    b"PASSWORD_STORE_GENERATED_LENGTH",
    b"PASSWORD_STORE_CHARACTER_SET",
    b"PASSWORD_STORE_CHARACTER_SET_NO_SYMBOLS",
    b"PASSWORD_STORE_ENABLE_EXTENSIONS",
    b"PASSWORD_STORE_EXTENSIONS_DIR",
];

/// The name looks like a credential's: a [`STEMS`] stem anywhere, a [`WORDS`] word outside
/// the non-secret names around it ([`names_an_identifier`]), `PWD` as a word of a longer
/// name (`MYSQL_PWD`; `PWD` alone is the working directory), `PW` as the last word of a
/// longer one but for digits (`DB_PW`, `DB_PW2`; Playwright's `PW_TEST_*` start with it),
/// or one of [`NAMES`]; all case-insensitive (`npm_config__auth`,
/// `TF_TOKEN_app_terraform_io`), unless the name is one of [`NOT_SECRET`].
pub fn credential_name(name: &[u8]) -> bool {
    if NOT_SECRET.iter().any(|n| n.eq_ignore_ascii_case(name)) {
        return false;
    }
    let first = name.first().map(u8::to_ascii_uppercase);
    has_stem(name)
        || has_credential_word(name)
        || NAMES
            .iter()
            .any(|n| (n.first() == first.as_ref() || n.first() == Some(&b'*')) && matches_ignore_case(n, name))
}

/// A stem in the name, also across separators other than `_` (`app.api-key`,
/// `connection-string`): those are skipped while matching, `_` is not (`CONNECTION_STRING`
/// is a stem of its own).
fn has_stem(name: &[u8]) -> bool {
    let kept = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let stem_at = |mut i: usize, stem: &[u8]| {
        for &s in stem {
            while i < name.len() && !kept(name[i]) {
                i += 1;
            }
            if i == name.len() || name[i].to_ascii_uppercase() != s {
                return false;
            }
            i += 1;
        }
        true
    };
    (0..name.len()).any(|i| {
        let first = name[i].to_ascii_uppercase();
        STEM_FIRST[usize::from(first)] && STEMS.iter().any(|s| s[0] == first && stem_at(i, s))
    })
}

/// The letters a stem starts with, so most positions of a name cost one lookup.
const STEM_FIRST: [bool; 256] = {
    let mut t = [false; 256];
    let mut i = 0;
    while i < STEMS.len() {
        t[STEMS[i][0] as usize] = true;
        i += 1;
    }
    t
};

fn has_credential_word(name: &[u8]) -> bool {
    let mut words = Words { name, at: 0 };
    let (mut before, mut before_that): (Option<&[u8]>, Option<&[u8]>) = (None, None);
    let mut count = 0;
    while let Some(w) = words.next() {
        count += 1;
        let after = words;
        let is = |word: &[u8]| w.eq_ignore_ascii_case(word);
        let was = |w: Option<&[u8]>, word: &[u8]| w.is_some_and(|w| w.eq_ignore_ascii_case(word));
        // by length, so that a word is compared with the few it could be; the rest of the
        // name is read again only for the rare ones
        let found = match w.len() {
            // `PW` last in a longer name but for digits; `P12`, `PKCS12` (split at the
            // digits): a certificate with its private key
            2 => {
                (is(b"PW") && count > 1 && { after }.all(|w| w.iter().all(u8::is_ascii_digit)))
                    || (w == b"12" && (was(before, b"P") || was(before, b"PKCS")))
            }
            // `PWD` in a longer name (`PWD` alone is the working directory)
            3 if is(b"PWD") => count > 1 || { after }.next().is_some(),
            // `BUILD_CERTIFICATE_BASE64`, GitHub's name for a base64 `.p12` in its Apple
            // signing guide (not a CA's: `CA_CERT_BASE64` is public)
            4 if is(b"BASE") => {
                { after }.next() == Some(b"64")
                    && (was(before, b"CERT") || was(before, b"CERTIFICATE"))
                    && !was(before_that, b"CA")
            }
            n => (WORDS.iter().any(|c| is(c)) || (n > 5 && glued(w))) && !names_an_identifier(w, before, after),
        };
        if found {
            return true;
        }
        (before_that, before) = (before, Some(w));
    }
    false
}

/// `TOKEN` glued to the word before it (`GHTOKEN`, `NPMTOKEN`, `MY_SLACKTOKEN`), but
/// tiktoken's own name (`TIKTOKEN_CACHE_DIR`), and a model provider's key glued
/// (`OPENAIKEY`, `XAIKEY`). `KEY` is not read glued otherwise: names end in it harmlessly
/// (`LESSKEY`, fakeroot's `FAKEROOTKEY`, `HOTKEY`, `DNSKEY`), nor are `PASS` and `PAT`
/// (`BYPASS`, `COMPAT`).
fn glued(w: &[u8]) -> bool {
    let n = w.len();
    let ends = |s: &[u8]| n > s.len() && w[n - s.len()..].eq_ignore_ascii_case(s);
    match w.last() {
        Some(b'N' | b'n') => ends(b"TOKEN") && !w.eq_ignore_ascii_case(b"TIKTOKEN"),
        Some(b'Y' | b'y') => ends(b"AIKEY"),
        _ => false,
    }
}

/// A credential word that is part of a non-secret name around it, by the words before and
/// after it: `*_KEY_ID` (an identifier such as `GPG_KEY_ID`, `AWS_KMS_KEY_ID`; not
/// `*_ACCESS_KEY_ID`, half of an access key), `*KEY_VAULT_*` (Azure Key Vault's name or URL:
/// `AZURE_KEY_VAULT_URL`), `*_ISSUER` (who issues them: `JWT_ISSUER`). Only the word itself
/// is spared: any other word or stem of the name still counts (`JWT_SECRET_ISSUER`,
/// `GH_TOKEN_KEY_ID`).
fn names_an_identifier(word: &[u8], before: Option<&[u8]>, mut after: Words<'_>) -> bool {
    let (next, then) = (after.next(), after.next());
    let is = |w: Option<&[u8]>, word: &[u8]| w.is_some_and(|w| w.eq_ignore_ascii_case(word));
    let this_is_key = word.eq_ignore_ascii_case(b"KEY");
    let key_id = this_is_key && is(next, b"ID") && then.is_none() && !is(before, b"ACCESS");
    let key_vault = this_is_key && is(next, b"VAULT") && then.is_some();
    let issuer = is(next, b"ISSUER") && then.is_none();
    key_id || key_vault || issuer
}

/// The name's words, in place: split at every character that is not a letter or a digit
/// (`github-token`, `app.key`), where lower case meets upper case (`githubToken`) and
/// where letters meet digits (`API_KEY2`, `GH_TOKEN1`).
#[derive(Clone, Copy)]
struct Words<'a> {
    name: &'a [u8],
    at: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let n = self.name;
        while self.at < n.len() && !n[self.at].is_ascii_alphanumeric() {
            self.at += 1;
        }
        if self.at == n.len() {
            return None;
        }
        let start = self.at;
        self.at += 1;
        while let Some(&c) = n.get(self.at) {
            let p = n[self.at - 1];
            let camel = p.is_ascii_lowercase() && c.is_ascii_uppercase();
            if !c.is_ascii_alphanumeric() || camel || p.is_ascii_digit() != c.is_ascii_digit() {
                break;
            }
            self.at += 1;
        }
        Some(&n[start..self.at])
    }
}

/// [`crate::environment::matches`] with ASCII case ignored, for upper-case patterns.
fn matches_ignore_case(pattern: &[u8], name: &[u8]) -> bool {
    crate::environment::matches_by(pattern, name, |p, n| p == n.to_ascii_uppercase())
}
