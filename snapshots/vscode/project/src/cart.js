const config = require("./config");
const { formatPrice } = require("./utils/format");

class Cart {
  constructor() {
    this.items = [];
  }

  add(name, price, quantity = 1) {
    this.items.push({ name, price, quantity });
  }

  subtotal() {
    return this.items.reduce((sum, item) => sum + item.price * item.quantity, 0);
  }
}

function applyDiscount(total, percent) {
  if (percent < 0 || percent > 100) {
    throw new RangeError("percent must be between 0 and 100");
  }
  return total * (1 - percent / 100);
}

function totalWithTax(cart, discount = 0) {
  const discounted = applyDiscount(cart.subtotal(), discount);
  return discounted * (1 + config.taxRate);
}

function receipt(cart) {
  const lines = cart.items.map((item) => `${item.name} x${item.quantity}: ${formatPrice(item.price * item.quantity)}`);
  lines.push(`total: ${formatPrice(totalWithTax(cart))}`);
  return lines.join("\n");
}

module.exports = { Cart, applyDiscount, totalWithTax, receipt };
