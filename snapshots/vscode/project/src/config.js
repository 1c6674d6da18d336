// Settings for the cart service.
const config = {
  host: "localhost",
  port: 8080,
  currency: "EUR",
  taxRate: 0.2,
  // the receipt printer also listens on localhost
  printerUrl: "http://localhost:9100/print",
};

module.exports = config;
