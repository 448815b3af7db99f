//! The HTTP responses the serving side writes itself (refusals, challenges, metadata), shared
//! by the HTTP layer and its authorization.

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
