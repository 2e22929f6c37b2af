import { printGasBench } from "./gas";

async function main() {
  await printGasBench();
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
