import path from "node:path";
import config from "./config.js";
import fs from "node:fs";
import format from "./utils/format.js";
import cart from "./cart.js";

// Writes the receipts the cart service prints.
export function receiptFile(id) {
  return path.join(config.outDir ?? ".", "receipt-" + id + ".txt");
}

export function saveReceipt(id, items) {
  const lines = items.map((item) => item.name + ": " + format.formatPrice(item.price));
  fs.writeFileSync(receiptFile(id), lines.join("\n") + "\n");
  return cart;
}
