// @ts-check
const { Cart, totalWithTax } = require("./cart");

/**
 * @param {{ name: string, price: number, quantity: number }[]} items
 * @param {number} discount percent off before tax
 */
function checkout(items, discount) {
  const cart = new Cart();
  for (const item of itms) {
    cart.add(item.name, item.price, item.quantity);
  }
  const total = totalWithTx(cart, discount);
  return { count: cart.items.lenght, total: Math.rount(total * 100) / 100 };
}

module.exports = { checkout };
