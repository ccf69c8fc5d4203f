/** IP addresses as bytes (lib/net/address.ts): every spelling, Go's classification, Go's printing. */
import { expect, test } from "bun:test";
import { formatIp, isPrivateIp, parseIp } from "../../lib/net/address.ts";

test.each([
  ["127.0.0.1", true, "127.0.0.1"],
  ["127.255.0.9", true, "127.255.0.9"],
  ["0.0.0.0", true, "0.0.0.0"],
  ["0.1.2.3", true, "0.1.2.3"],
  ["10.0.0.1", true, "10.0.0.1"],
  ["172.16.0.1", true, "172.16.0.1"],
  ["172.31.255.255", true, "172.31.255.255"],
  ["172.32.0.1", false, "172.32.0.1"],
  ["172.15.255.255", false, "172.15.255.255"],
  ["192.168.1.1", true, "192.168.1.1"],
  ["192.169.0.1", false, "192.169.0.1"],
  ["169.254.169.254", true, "169.254.169.254"],
  ["100.64.0.1", true, "100.64.0.1"],
  ["100.127.255.255", true, "100.127.255.255"],
  ["100.128.0.1", false, "100.128.0.1"],
  ["8.8.8.8", false, "8.8.8.8"],
  ["::", true, "::"],
  ["::1", true, "::1"],
  ["0:0:0:0:0:0:0:1", true, "::1"],
  ["::ffff:127.0.0.1", true, "127.0.0.1"],
  ["::ffff:7f00:1", true, "127.0.0.1"],
  ["0:0:0:0:0:ffff:7f00:1", true, "127.0.0.1"],
  ["::FFFF:7F00:0001", true, "127.0.0.1"],
  ["[::ffff:7f00:1]", true, "127.0.0.1"],
  ["::ffff:8.8.8.8", false, "8.8.8.8"],
  ["::ffff:0:127.0.0.1", true, "::ffff:0:7f00:1"],
  ["::127.0.0.1", true, "::7f00:1"],
  ["::10.0.0.1", true, "::a00:1"],
  ["64:ff9b::127.0.0.1", true, "64:ff9b::7f00:1"],
  ["64:ff9b::8.8.8.8", false, "64:ff9b::808:808"],
  ["64:ff9b:1::a00:1", true, "64:ff9b:1::a00:1"],
  ["2002:c0a8:101::1", true, "2002:c0a8:101::1"],
  ["2002:808:808::1", false, "2002:808:808::1"],
  ["fc00::1", true, "fc00::1"],
  ["fd12:3456::1", true, "fd12:3456::1"],
  ["fe80::1", true, "fe80::1"],
  ["fe80::1%eth0", true, "fe80::1"],
  ["febf::1", true, "febf::1"],
  ["fec0::1", true, "fec0::1"],
  ["2001:4860:4860::8888", false, "2001:4860:4860::8888"],
  ["1:0:0:2:0:0:0:3", false, "1:0:0:2::3"],
])("%s: private %p, printed as Go prints it (%s)", (ip, priv, printed) => {
  const b = parseIp(ip);
  expect(b).toBeDefined();
  expect(isPrivateIp(ip)).toBe(priv);
  expect(formatIp(b!)).toBe(printed);
});

test.each(["localhost", "", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "::g", "example.com"])("%p is not an address (and not private)", (s) => {
  expect(parseIp(s)).toBeUndefined();
  expect(isPrivateIp(s)).toBe(false);
});
