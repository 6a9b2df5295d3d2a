// Loaded into the conformance suite with NODE_OPTIONS=--require: its mock servers listen
// without naming a host (all interfaces); this binds every such listener to 127.0.0.1.
// The bind must stay synchronous (the suite reads server.address() right after listen),
// so the lookup of the literal loopback address is answered without going to the resolver.
'use strict';
const net = require('net');
const dns = require('dns');

const LOOPBACK = '127.0.0.1';
const listen = net.Server.prototype.listen;
const lookup = dns.lookup;

function loopbackLookup(hostname, options, callback) {
  if (typeof options === 'function') [callback, options] = [options, {}];
  if (hostname !== LOOPBACK) return lookup.call(dns, hostname, options, callback);
  if (options && options.all) return callback(null, [{ address: LOOPBACK, family: 4 }]);
  return callback(null, LOOPBACK, 4);
}

function withLoopback(args) {
  const [first, second] = args;
  if (first && typeof first === 'object' && !Array.isArray(first)) {
    const isHandle = first._handle !== undefined || first.fd !== undefined;
    if (isHandle || first.path !== undefined || first.host !== undefined) return null;
    return [{ ...first, host: LOOPBACK }, ...args.slice(1)];
  }
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    return typeof second === 'string' ? null : [first, LOOPBACK, ...args.slice(1)];
  }
  if (first === undefined || typeof first === 'function') return [0, LOOPBACK, ...args];
  return null;
}

net.Server.prototype.listen = function (...args) {
  const patched = withLoopback(args);
  if (patched === null) return listen.apply(this, args);
  dns.lookup = loopbackLookup;
  try {
    return listen.apply(this, patched);
  } finally {
    dns.lookup = lookup;
  }
};
