"""Where an index lives, and that its credentials never reach a message."""

from __future__ import annotations

import pytest

from lynxc.runtime.backends.lynx.location import IndexLocation, is_uri, location_from_settings, redact


def test_a_folder_is_local_and_a_uri_is_remote() -> None:
    assert not IndexLocation.of("/srv/index").remote
    assert IndexLocation.of("/srv/index").storage_options() is None
    assert IndexLocation.of("file:///srv/index").uri == "/srv/index"
    s3 = IndexLocation.of("s3://bucket/prefix/", {"region": "eu-west-1"})
    assert s3.remote and s3.storage_options() == {"region": "eu-west-1"}
    assert s3.join("source_a.lance") == "s3://bucket/prefix/source_a.lance"
    assert is_uri("gs://b/p") and not is_uri("relative/s3:/x") and not is_uri("/abs")


def test_settings_give_the_uri_and_its_options() -> None:
    location = location_from_settings(
        {"index_dir": "s3://b/p", "index_storage": {"allow_http": True, "endpoint": "http://127.0.0.1:9"}}
    )
    assert location.uri == "s3://b/p"
    assert location.options == {"allow_http": "True", "endpoint": "http://127.0.0.1:9"}


def test_secrets_never_show(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "env-secret-value-123")
    monkeypatch.setenv("AWS_REGION", "us-east-1")  # not a secret: never blanked
    location = IndexLocation.of(
        "s3://b/p", {"aws_secret_access_key": "settings-secret-456", "aws_session_token": "tok-789xyz"}
    )
    assert "secret" not in repr(location) and "tok-" not in repr(location)
    message = "failed with settings-secret-456, tok-789xyz and env-secret-value-123 in us-east-1"
    assert location.redact(message) == "failed with ***, *** and *** in us-east-1"
    # Short values (a flag, a region) are not secrets and would blank out ordinary words.
    assert redact("allow true", {"aws_secret_access_key": "true"}) == "allow true"


def test_object_store_failures_are_one_line_causes() -> None:
    from lynxc.runtime.backends.lynx.location import describe_error

    lance = OSError(
        'Failed to connect: IO { source: Generic { store: "S3", source: ListRequest { source: RetryError('
        'RetryErrorImpl { inner: Status { status: 404, body: Some("<?xml version=\\"1.0\\"?>\\n<Error>'
        '<Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>") } }) } }'
    )
    assert (
        describe_error(lance) == "the object store answered NoSuchBucket: The specified bucket does not exist"
    )
    # obstore's debug source spreads the cause over many lines
    refused = RuntimeError(
        "Generic S3 error: Error performing PUT http://127.0.0.1:5999/b/x - HTTP error: "
        "error sending request\n\nDebug source:\n  ConnectError(\n"
        '    "tcp connect error",\n    127.0.0.1:5999,\n    Os { code: 111 },\n  )'
    )
    assert (
        describe_error(refused) == "cannot connect to the object store at 127.0.0.1:5999 (tcp connect error)"
    )
    scheme = ValueError(
        "Invalid input, No object store provider found for scheme: 'foo'\nValid schemes: s3, gs"
    )
    assert describe_error(scheme) == "no object store for scheme 'foo' (known: s3, gs)"
    plain = ValueError("something else went wrong, /root/.cargo/registry/src/lance-io/src/x.rs:12:3\nmore")
    assert describe_error(plain) == "ValueError: something else went wrong"


def test_url_encoded_and_azure_secrets_are_redacted_and_queries_dropped() -> None:
    from lynxc.runtime.backends.lynx.location import describe_error

    sas = "sv=2024&sig=ab+cd/ef=="
    location = IndexLocation.of(
        "az://c/p", {"azure_storage_sas_key": sas, "azure_storage_master_key": "mk-123456"}
    )
    message = (
        "GET https://acct.blob.core.windows.net/c?sv%3D2024%26sig%3Dab%2Bcd%2Fef%3D%3D failed, mk-123456"
    )
    assert location.redact(message) == "GET https://acct.blob.core.windows.net/c?*** failed, ***"
    failed = RuntimeError("request to https://acct.blob.core.windows.net/c/x?sig=SECRET&sv=1 timed out")
    assert (
        describe_error(failed) == "RuntimeError: request to https://acct.blob.core.windows.net/c/x timed out"
    )
