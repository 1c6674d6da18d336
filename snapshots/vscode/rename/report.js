// Prints a short report of the week's sales.
const salesByDay = [120, 80, 95, 130, 60];

function sumOf(values) {
  let runningTotal = 0;
  for (const value of values) {
    runningTotal += value;
  }
  return runningTotal;
}

function averageOf(values) {
  return sumOf(values) / values.length;
}

const weekTotal = sumOf(salesByDay);
console.log("total", weekTotal, "average", averageOf(salesByDay));
