//! The credential rule against the second review of issue 39's names and values, both
//! ways (split from `credential_tests.rs`).

use super::tests::{HARMLESS, ISSUE_39_HARMLESS};
use super::*;

/// The second review of issue 39: credential names the rule missed (fastlane's session,
/// signing stores as CI keeps them, electron-builder's certificate link, `TOKEN` glued to
/// the word before it, a model provider's key glued), from their tools' documentation;
/// then variants.
const REVIEW_NAMES: &[&str] = &[
    "FASTLANE_SESSION",
    "BUILD_CERTIFICATE_BASE64",
    "CSC_LINK",
    "WIN_CSC_LINK",
    "CSC_INSTALLER_LINK",
    "GHTOKEN",
    "OPENAIKEY",
    // variants
    "fastlane_session",
    "APPLE_CERTIFICATE_BASE64",
    "SIGNING_CERT_BASE64",
    "certificateBase64",
    "IOS_P12_BASE64",
    "CERTIFICATE_P12",
    "MAS_CERTIFICATE_P12",
    "P12",
    "SIGNING_PKCS12",
    "ANDROID_KEYSTORE_BASE64",
    "RELEASE_KEYSTORE",
    "signingKeystore",
    "UPLOAD_PFX",
    "CODESIGN_PFX_BASE64",
    "RELEASE_JKS",
    "NPMTOKEN",
    "MY_SLACKTOKEN",
    "ghtoken",
    "XAIKEY",
    "MY_OPENAIKEY_2",
];

/// Harmless names beside them that must stay: `KEY`, `SESSION` and `CERT` appear in what
/// desktops, shells and TLS clients need, so only the forms above are read (fakeroot's
/// `FAKEROOTKEY`, less's `LESSKEY_SYSTEM`, a CA's certificate, electron-builder's
/// certificate name and switches, PKCS#11 modules).
const REVIEW_HARMLESS: &[&str] = &[
    "FAKEROOTKEY",
    "LESSKEY",
    "LESSKEY_SYSTEM",
    "LESSKEYIN",
    "HOTKEY",
    "MONKEY",
    "TURKEY",
    "HOCKEY",
    "DNSKEY",
    "TIKTOKEN",
    "TIKTOKEN_CACHE_DIR",
    "XDG_SESSION_ID",
    "XDG_SESSION_TYPE",
    "XDG_SESSION_DESKTOP",
    "DESKTOP_SESSION",
    "SESSION_MANAGER",
    "DBUS_SESSION_BUS_ADDRESS",
    "CA_CERT_BASE64",
    "CA_CERTIFICATE_BASE64",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "CSC_NAME",
    "CSC_IDENTITY_AUTO_DISCOVERY",
    "CSC_LINKS_DIR",
    "PKCS11_MODULE",
    "P11_KIT_SERVER_ADDRESS",
    "BASE64_CERT_DIR",
    "SP12",
    "HTTP12",
    "TOKENS",
    "MAX_TOKENS",
];

#[test]
fn review_names_are_caught_and_their_neighbours_are_not() {
    for n in REVIEW_NAMES {
        assert!(credential_name(n.as_bytes()), "{n} should look like a credential");
    }
    for n in REVIEW_HARMLESS.iter().chain(HARMLESS).chain(ISSUE_39_HARMLESS) {
        assert!(!credential_name(n.as_bytes()), "{n} should not look like a credential");
    }
}

/// The second review: values in their vendors' documented formats, each under an innocent
/// name (the token bodies are made up, of the documented alphabet and length).
const REVIEW_VALUES: &[&str] = &[
    // Go MySQL DSNs (go-sql-driver/mysql): with a protocol, a socket, none, an `@` inside
    "app:s3cret@tcp(db:3306)/x",
    "root:pw@unix(/run/mysqld/mysqld.sock)/app?parseTime=true",
    "user:password@/dbname",
    "app:p@ss@tcp(db)/x",
    "DSN=app:pw@tcp6([::1]:3306)/x",
    // Oracle JDBC: thin and OCI drivers, SID and service forms
    "jdbc:oracle:thin:scott/tiger@host:1521:orcl",
    "jdbc:oracle:thin:scott/tiger@//db.internal:1521/XEPDB1",
    "jdbc:oracle:oci:system/pw@orcl",
    // webhooks that are their own credential
    "https://discord.com/api/webhooks/794590023369752587/tjxHaPHLKp9aEdSwJuLeHhHHGEqIxt1aay4I67FOP9uzsYEWmj0eJmDn-2ZvCYLyOb_K",
    "https://discordapp.com/api/webhooks/318821398619357185/czD2ExfFEHWLC0rONDOX5boZShaj6iU6htegr6t9TYcs",
    "https://canary.discord.com/api/webhooks/794590023369752587/tjxHaPHLKp9aEdSwJuLeHhHHGEqIx",
    "https://acme.webhook.office.com/webhookb2/8e3c6a1b-1111-2222-3333-444455556666@72f988bf-86f1-41af-91ab-2d7cd011db47/IncomingWebhook/0123456789abcdef0123456789abcdef/8e3c6a1b-1111-2222-3333-444455556666",
    "https://prod-03.westus.logic.azure.com:443/workflows/c4ed9335bc864140a11f4508d19acea3/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=IxEQ_ygZf6WNEQCbjV0Vs6p6Y4DyNEJVAa86U5B4xhk",
    "https://default0123.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/0123abcd/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=abc",
    // tokens in their issuers' formats
    "gsk_0123456789abcdefghijABCDEFGHIJ0123456789abcdefgh",
    "xai-0123456789abcdefghijABCDEFGHIJ0123456789abcdefghijABCDEFGHIJ0123456789abcdefgh",
    "hvs.CAESIP2jTxc9S2K7Z6CtcFWQv7-044m_oSsxnPE1H3nF89l3GiYKHGh2cy5sQmlIZVNyTWJNcDRsYWJpQjlhYjVlb1cQh6PL8wEYAg",
    "hvb.AAAAAQJgxDgqsGNorpoOR7hPZ5SU-ynBvCl764jyRP_fnX7WvkdkDzGjbLNGdPdtlY33Als2P36yDZueqzfdGw9RsaTeaYXSH7E4RYSWuRoQ9YRKIw8o7mDDY2ZcT3KOB7RwtW1w1FN2eDqcy_sbCjXPaM1iBVH",
    "hvr.0123456789abcdefABCDEF",
    "sntrys_eyJpYXQiOjE3MjQ5ODgwOTguOTc2MTM5LCJ1cmwiOiJodHRwczovL3NlbnRyeS5pbyJ9_1jYBAya5tZ74KZHxI33C55LO7kgR7Opr6R+KzHJbZHQ",
    "sntryu_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "whsec_0123456789abcdefABCDEFGHijklmnop",
    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "doo_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
    "lin_api_0123456789abcdefghijABCDEFGHIJ0123456789",
    "glsa_0123456789abcdefABCDEF0123456789_0a1b2c3d",
    "glc_eyJvIjoiNzQ0NTg3IiwibiI7InN0YWlrLTQ3NTgzMC1obC13cml0ZS1oYW5kc29uJG9raSJ9",
    "shpat_0123456789abcdef0123456789abcdef",
    "shpss_0123456789abcdef0123456789abcdef",
    "shpca_0123456789abcdef0123456789abcdef",
    "shppa_0123456789abcdef0123456789abcdef",
    "secret_lc3Weq9s87EnkNWk2Yibko91hhLuNQIEzSoeAAoriUz",
    "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",
    // private keys in every armour, headers without the space
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF...",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIF",
    "x-----BEGIN EC PRIVATE KEY-----",
    "...\n-----END PRIVATE KEY-----\n",
    "Authorization:Bearer abc",
    "X-Trace:1\nAuthorization:Basic YWxhZGRpbjpvcGVuc2VzYW1l",
    "X-Api-Key:abc",
    "Private-Token:glpat-x",
];

/// Values of the same shapes that hold no credential.
const REVIEW_HARMLESS_VALUES: &[&str] = &[
    "git@github.com:org/repo.git",
    "user@host:/srv/backup",
    "mailto:first.last@example.com",
    "app:@tcp(db:3306)/x",
    "app@tcp(db:3306)/x",
    "tcp(db:3306)/x",
    "localhost:3306/x@y",
    "jdbc:oracle:thin:@//db.internal:1521/XEPDB1",
    "jdbc:oracle:thin:@db:1521:orcl",
    "jdbc:postgresql://db:5432/app",
    "/usr/lib:/opt/thin:/x/y@1.2.3",
    "https://discord.com/api/webhooks/",
    "https://discord.com/channels/123/456",
    "https://discord.gg/abcdef",
    "https://acme.webhook.office.com/",
    "https://outlook.office.com/mail/",
    "https://prod-03.westus.logic.azure.com/workflows/c4ed/triggers/manual/run?api-version=2016-06-01",
    "gsk_short",
    "xai-grok-2",
    "hvs.short",
    "hvr.",
    "sntrys_",
    "whsec_",
    "whsec_short",
    "dop_v1_abc",
    "lin_api_short",
    "glsa_short",
    "glc_short",
    "shpat_short",
    "secret_key_base",
    "my_secret_name_is_long_but_has_underscores_everywhere_in_it",
    "ntn_short",
    "-----BEGIN CERTIFICATE-----\nMIIB",
    "-----BEGIN PUBLIC KEY-----\nMIIB",
    "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmQIN",
    "-----BEGIN PGP SIGNED MESSAGE-----",
    "--BEGIN-- private key",
    "-j4 --jobserver-auth=3,4",
    "a-b-c-d-e",
    "pwd:ls:history",
    "key:value",
    "Content-Type:text/plain",
];

#[test]
fn review_values_are_caught_and_their_lookalikes_are_not() {
    for v in REVIEW_VALUES {
        assert!(value_holds_credential(v.as_bytes()), "{v} should hold a credential");
        assert_eq!(credential(b"MYAPP_SETTING", v.as_bytes()), Some(Why::Value), "{v}");
    }
    for v in REVIEW_HARMLESS_VALUES {
        assert!(!value_holds_credential(v.as_bytes()), "{v} should not hold a credential");
    }
}
