//! The HTTP responses the serving side writes itself (refusals, challenges, metadata, the
//! answer to a body rmcp cannot decode), shared by the HTTP layer and its authorization.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};

/// An answer of the MCP endpoint.
pub type HttpResponse =
    hyper::Response<http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>>;

/// A short plain-text answer.
pub(crate) fn plain(status: hyper::StatusCode, text: impl Into<String>) -> HttpResponse {
    let body = Full::new(Bytes::from(text.into()))
        .map_err(|never| match never {})
        .boxed();
    let mut response = hyper::Response::new(body);
    *response.status_mut() = status;
    response
}

/// The answer to a JSON `POST` body that is no JSON-RPC message rmcp can decode: `400` with a
/// JSON-RPC error, `-32700 Parse error` (id `null`) for a body that is not JSON, `-32600
/// Invalid Request` (with the request's id when it can be read) for JSON that is not a
/// message. `None` when the body decodes after all, and rmcp's answer stands.
pub(crate) fn undecodable(body: &[u8]) -> Option<HttpResponse> {
    use crate::mcp::wire::{error_line, request_id};
    let error = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(body).err()?;
    // Syntax only (no depth limit, nothing kept).
    let text = match serde_json::from_slice::<serde::de::IgnoredAny>(body) {
        Err(_) => error_line(None, -32700, "Parse error"),
        Ok(_) => error_line(
            request_id(body).as_deref(),
            -32600,
            &format!("Invalid Request: {error}"),
        ),
    };
    Some(json(hyper::StatusCode::BAD_REQUEST, text.trim_end()))
}

/// A JSON answer (one JSON-RPC message).
pub(crate) fn json(status: hyper::StatusCode, text: &str) -> HttpResponse {
    let mut response = plain(status, text);
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    response
}
