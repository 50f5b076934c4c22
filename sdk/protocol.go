package sdk

import "github.com/exocortex/exocortex/protocol"

// ProtocolVersion is the plugin protocol this SDK speaks (protocol.Version),
// for a test's ManifestRequest. The go-plugin binding itself (handshake,
// plugin set, transport) is package protocol, which the host imports too.
const ProtocolVersion = protocol.Version
