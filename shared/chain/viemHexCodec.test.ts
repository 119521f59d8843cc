import fc from "fast-check";
import { bytesToHex, hexToBytes, type Hex } from "viem";
import { describe, expect, it } from "vitest";

// patches/viem+2.57.1.patch gives viem's bytesToHex and hexToBytes Node's hex codec past a few bytes (issue 26). These
// properties hold viem's answers to what its own loops give, at every length on both sides of the switch.

/** viem's loop, as unpatched: two lowercase hex digits per byte. */
function referenceHex(bytes: Uint8Array): Hex {
  let hex = "0x";
  for (const byte of bytes) hex += byte.toString(16).padStart(2, "0");
  return hex as Hex;
}

const bytes = fc.uint8Array({ minLength: 0, maxLength: 600 });

describe("viem's hex codec (patched)", () => {
  it("bytesToHex spells every byte array as two lowercase hex digits per byte", () => {
    fc.assert(fc.property(bytes, (value) => bytesToHex(value) === referenceHex(value)));
  });

  it("bytesToHex reads only the view it is given, not the rest of its buffer", () => {
    fc.assert(
      fc.property(bytes, fc.nat(40), fc.nat(40), (value, before, after) => {
        const backing = new Uint8Array(before + value.length + after).fill(0xee);
        backing.set(value, before);
        return bytesToHex(backing.subarray(before, before + value.length)) === referenceHex(value);
      }),
    );
  });

  it("hexToBytes reads back what bytesToHex wrote, in either letter case", () => {
    fc.assert(
      fc.property(bytes, fc.boolean(), (value, upper) => {
        const hex = referenceHex(value);
        const spelled = (upper ? `0x${hex.slice(2).toUpperCase()}` : hex) as Hex;
        expect(hexToBytes(spelled)).toEqual(value);
      }),
    );
  });

  it("hexToBytes gives an array that owns its whole buffer (no view into a shared pool)", () => {
    fc.assert(
      fc.property(bytes, (value) => {
        const read = hexToBytes(referenceHex(value));
        return read.byteOffset === 0 && read.buffer.byteLength === value.length;
      }),
    );
  });

  it("hexToBytes reads an odd number of digits with a leading zero", () => {
    expect(hexToBytes(`0x${"a".repeat(101)}`)).toEqual(hexToBytes(`0x0${"a".repeat(101)}`));
  });

  it("error: hexToBytes refuses a string with a character that is not hex, at any length and position", () => {
    fc.assert(
      fc.property(
        bytes.filter((value) => value.length > 0),
        fc.nat(),
        fc.constantFrom("g", "x", " ", "-", "é"),
        (value, at, bad) => {
          const digits = referenceHex(value).slice(2);
          const index = at % digits.length;
          const broken = `0x${digits.slice(0, index)}${bad}${digits.slice(index + 1)}` as Hex;
          expect(() => hexToBytes(broken)).toThrow(/Invalid byte sequence/);
        },
      ),
    );
  });
});
