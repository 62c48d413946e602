// Values that WHATWG URL parses but that are not an origin a CSP frame-ancestors may name (issue 41, finding 8):
// each would widen or end the directive if it reached the header. Every door that takes embed origins (the
// store, the JSON API, /me, the admin's pages, the CLI) refuses each one, naming it.
export const NOT_ORIGINS = [
  // Every https site.
  'https://*',
  'https://*.example.com',
  // Ends the directive and adds one.
  'https://blog.example.com;sandbox',
  'https://blog.example.com%3Bsandbox',
  // A comma starts a second policy in the header.
  'https://a.example,b.example',
  "https://exa'mple.com",
  'https://a_b.example',
];
