// Package conformance is the conformance suite of Exocortex's plugin SDKs: it starts
// a plugin as a real process through the host (core/host: discovery, go-plugin's
// handshake, deadlines, restarts), calls it as the agent loop would, and checks the
// answers. It runs against the same plugin written twice, with the Go SDK
// (testdata/goplugin) and with the Python SDK (testdata/pyplugin, started as
// {"command": ["/usr/bin/python3", "main.py"]} with the SDK installed beside it), so
// the two SDKs are held to one behaviour:
//
//   - manifest: extensions, hooks, orders, keys, tools and files, equal to
//     testdata/manifest.golden.json and the same on every request;
//   - protocol: the handshake, gRPC health, the protocol-version refusal, a request
//     without its HookCall, and a graceful stop through go-plugin's controller;
//   - hooks: each hook of the protocol answers its own response type, built from its own
//     request, with state changes the host's store accepts;
//   - state: what the host hands is read, declared keys are written and reset, and
//     undeclared reads and writes and values of the wrong type are refused with
//     FailedPrecondition naming the extension and the key;
//   - signals: an extension reacts to a message carrying signals.Repeat;
//   - errors: a panic or exception is Internal naming the extension and the plugin
//     keeps serving; a plain error is Unknown, a status error passes through;
//   - readonly: an extension that changes its request in place instead of
//     answering fails with FailedPrecondition naming plugin, extension, hook and
//     field and the response field that does the job (from the protocol's
//     changed_by and change_elsewhere options), in a batch and over the Dispatch
//     stream too, where the next extension still gets the request as sent;
//   - batches (RunBatch, which the manifest says it serves): state written or reset
//     by one extension reaches the next that reads it, each extension gets its own
//     copy of the request, the history and the prompt so far (system_prompt,
//     extras, prompt_tokens) reach only the extensions that declare reads_history
//     and reads_prompt, a batch stops right after a result that sets more than
//     state (the host sends the rest again), and a failure is its extension's
//     result, written as a Go gRPC error, while the batch goes on;
//   - dispatch (Dispatch, which the manifest says it serves): those batches, one
//     at each hook and more, sent over one stream, each after the answer to the one
//     before, are answered in order, each exactly as RunBatch answers it (durations
//     aside); closing the sending side ends the stream cleanly, a batch RunBatch
//     refuses ends it with the refusal, and the plugin serves the next stream;
//   - tools: results, tool failures, bad arguments, unknown tools, no state access,
//     and a call back into the host's services (RunSubordinate);
//   - logs: the plugin's records reach the host's log at their level;
//   - timeouts: a hung extension is killed at its deadline and the plugin restarted;
//   - orphans: a plugin whose host dies exits on its own.
//
// The Python half is skipped, saying why, when /usr/bin/python3 cannot import grpc
// and google.protobuf (apt-get install -y python3-grpcio python3-protobuf), unless
// EXOCORTEX_CONFORMANCE_PYTHON=require makes that a failure. The suite also runs the
// Python SDK's own unit tests (sdk/python/tests).
//
//	go test ./sdk/conformance              # both plugins
//	go test ./sdk/conformance -update      # rewrite the golden manifest
package conformance
