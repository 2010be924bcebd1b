use super::*;

/// Real names from the providers' and tools' documentation.
const CREDENTIALS: &[&str] = &[
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "CLOUDSDK_AUTH_ACCESS_TOKEN_FILE",
    "AZURE_CLIENT_SECRET",
    "AZURE_CLIENT_CERTIFICATE_PATH",
    "AZURE_CLIENT_CERTIFICATE_PASSWORD",
    "AZURE_PASSWORD",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_OPENAI_API_KEY",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_DEVOPS_EXT_PAT",
    "OPENAI_API_KEY",
    "OPENAI_ADMIN_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "MISTRAL_API_KEY",
    "CO_API_KEY",
    "COHERE_API_KEY",
    "GROQ_API_KEY",
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "HUGGINGFACEHUB_API_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITLAB_TOKEN",
    "CI_JOB_TOKEN",
    "CI_JOB_JWT_V2",
    "NPM_TOKEN",
    "NODE_AUTH_TOKEN",
    "npm_config__auth",
    "TWINE_PASSWORD",
    "UV_PUBLISH_TOKEN",
    "POETRY_PYPI_TOKEN_PYPI",
    "KUBECONFIG",
    "DOCKER_AUTH_CONFIG",
    "DOCKER_PASSWORD",
    "PGPASSWORD",
    "MYSQL_PWD",
    "REDISCLI_AUTH",
    "VAULT_TOKEN",
    "TF_TOKEN_app_terraform_io",
    "NGROK_AUTHTOKEN",
    "SLACK_BOT_TOKEN",
    "SSHPASS",
    "BW_SESSION",
    "OP_SESSION_my",
    // spellings that split words other than at `_`: digits, camelCase, `-` and `.`
    "GH_TOKEN2",
    "API_KEY2",
    "githubToken",
    "github-token",
    "app.api-key",
    "slackBotToken",
    "DB_CREDS",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "PGPASSFILE",
    "NETRC",
    "HTTP_AUTHORIZATION",
];

/// Names tools need that the patterns must leave alone.
const HARMLESS: &[&str] = &[
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "LANG",
    "TERM",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "GPG_TTY",
    "KEYTIMEOUT",
    "LESSKEY",
    "XAUTHORITY",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "TOKENIZERS_PARALLELISM",
    "TIKTOKEN_CACHE_DIR",
    "MAX_TOKENS",
    "KUBERNETES_SERVICE_HOST",
    "KUBERNETES_PORT_443_TCP",
    "AWS_REGION",
    "AWS_PROFILE",
    "AWS_ROLE_ARN",
    "AZURE_CLIENT_ID",
    "AZURE_TENANT_ID",
    "OPENAI_BASE_URL",
    "XDG_SESSION_ID",
    "DBUS_SESSION_BUS_ADDRESS",
    "AUTHENTICATION_LDAP_CLIENT_LOG",
    "KAGENT_URL",
    "SRT_SETTINGS_PATH",
    "PKG_CONFIG_PATH",
    "LS_COLORS",
    "HOSTNAME",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_RESOURCE_ATTRIBUTES",
    "MAKEFLAGS",
    "PS1",
    "tiktokenCacheDir",
];

#[test]
fn credential_names_from_the_docs_are_caught_and_tool_names_are_not() {
    for n in CREDENTIALS {
        assert!(credential_name(n.as_bytes()), "{n} should look like a credential");
    }
    for n in HARMLESS {
        assert!(!credential_name(n.as_bytes()), "{n} should not look like a credential");
    }
}

#[test]
fn values_with_credentials_under_innocent_names_are_caught() {
    for v in [
        // fields: libpq's spaces, JSON, OpenTelemetry header lists, query keys
        "host=db password = s3cret",
        r#"{"user":"a","password":"s3cret"}"#,
        "Authorization=Bearer abc",
        "X-Trace: 1\nAuthorization: Bearer abc",
        "x-honeycomb-team=abc,api-key=def",
        "https://maps.example/api?key=abc",
        "Driver={ODBC};Server=db;Uid=app;Pwd=s3cret",
        // tokens in their issuers' formats, whatever the variable is called
        "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123",
        "sk-0123456789abcdef0123456789abcdef",
        "https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        "glpat-abcdefghij0123456789",
        "xoxb-1234567890-abcdef",
        "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
        "AKIAIOSFODNN7EXAMPLE",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nabc",
        "AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
    ] {
        assert!(value_holds_credential(v.as_bytes()), "{v}");
    }
    for v in [
        "/usr/local/bin:/opt/keys:/bin",
        "rs=0:di=01;34:*.key=01;31:*.pem=01;31",
        "sk-agent-7d9f8b6c5-x2k4p",
        "sk-SK",
        "-j4 --jobserver-auth=3,4",
        "service.name=agent,deployment.environment=prod",
        "unix:path=/run/user/0/bus,guid=0123",
        "https://api.openai.com/v1",
        "desk-0123456789abcdef0123456789abcdef",
        "AKIAIOSFODNN7EXAMPLEXX",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0",
        "C.UTF-8",
        "git@github.com:org/repo.git",
        "Content-Type: text/plain",
        "",
    ] {
        assert!(!value_holds_credential(v.as_bytes()), "{v}");
    }
}

#[test]
fn values_with_passwords_are_caught() {
    for v in [
        "postgres://app:s3cret@db.internal:5432/app",
        "redis://:s3cret@cache:6379/0",
        "https://oauth2:glpat-xxxx@gitlab.com/group/repo.git",
        "https://a.example/simple https://u:p@b.example/simple",
        "Server=db;User Id=app;Password=s3cret;",
        "jdbc:postgresql://db/app?user=app&password=s3cret",
        "password=x",
    ] {
        assert!(value_holds_credential(v.as_bytes()), "{v}");
    }
    for v in [
        "postgres:///app",
        "ssh://git@github.com:22/org/repo",
        "https://user@host/x",
        "http://[::1]:8080/",
        "git@github.com:org/repo.git",
        "/usr/bin:/bin",
    ] {
        assert!(!value_holds_credential(v.as_bytes()), "{v}");
    }
}
